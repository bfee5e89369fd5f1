// The report page's files, embedded at build time from src/report/assets/ and
// third_party/chartjs/ by embed_assets.cmake (the generated report_assets.cpp defines these).
#pragma once

#include <string_view>

namespace lighten::report_assets {

std::string_view page();           // assets/report.html: the template with {{NAME}} slots
std::string_view style();          // assets/report.css
std::string_view script();         // assets/report.js
std::string_view chart_library();  // third_party/chartjs/chart.umd.js

}  // namespace lighten::report_assets

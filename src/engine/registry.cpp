#include "engine/registry.h"

#include <array>

#include "formats/cfb/cfb_format.h"
#include "formats/hwp/hwp_format.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/media/media_format.h"
#include "formats/office_binary/doc_format.h"
#include "formats/office_binary/ppt_format.h"
#include "formats/office_binary/xls_format.h"
#if LIGHTEN_WITH_PDF
#include "formats/pdf/pdf_format.h"
#endif
#include "formats/png/png_format.h"
#include "formats/video/avi_format.h"
#include "formats/zip/zip_format.h"

namespace lighten {

namespace {

Verdict verify_jpeg_file(ByteView input, ByteView output, Context& context) {
  const Policy& policy = context.policy();
  if (policy.mode == Mode::kLossless && policy.verify == VerifyLevel::kCoefficients)
    return verify_jpeg(input, output, policy, context.fingerprint(input), std::nullopt, &context);
  return verify_jpeg(input, output, policy, std::nullopt, context.scored(input), &context);
}

}  // namespace

std::span<const FormatEntry> format_registry() {
  // One entry a line, with the build-time PDF switch between them.
  // clang-format off
  static constexpr std::array kEntries{
      FormatEntry{Kind::kJpeg, &optimize_jpeg, &verify_jpeg_file, &describe_jpeg},
      FormatEntry{Kind::kPng, &optimize_png, &verify_png, &describe_png},
#if LIGHTEN_WITH_PDF
      FormatEntry{Kind::kPdf, &optimize_pdf, &verify_pdf, &describe_pdf},
#endif
      FormatEntry{Kind::kDocx, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kXlsx, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kPptx, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kHwpx, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kOdt, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kOds, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kOdp, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kEpub, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kZip, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kJar, &optimize_zip, &verify_zip, &describe_zip},
      FormatEntry{Kind::kAvi, &optimize_avi, &verify_avi, &describe_avi},
      FormatEntry{Kind::kMp4, &optimize_media, &verify_media, &describe_media},
      FormatEntry{Kind::kMov, &optimize_media, &verify_media, &describe_media},
      FormatEntry{Kind::kHwp, &optimize_hwp, &verify_hwp, &describe_hwp},
      FormatEntry{Kind::kPpt, &optimize_ppt, &verify_ppt, &describe_ppt},
      FormatEntry{Kind::kXls, &optimize_xls, &verify_xls, &describe_xls},
      FormatEntry{Kind::kDoc, &optimize_doc, &verify_doc, &describe_doc},
      FormatEntry{Kind::kCfb, &optimize_cfb, &verify_cfb, &describe_cfb},
  };
  // clang-format on
  return kEntries;
}

const FormatEntry* find_format(Kind kind) {
  for (const auto& entry : format_registry())
    if (entry.kind == kind) return &entry;
  return nullptr;
}

}  // namespace lighten

// Writes small PDFs as text for tests: numbered objects, a correct xref table, optional
// incremental updates. Tests need no files of their own.
#pragma once

#include <zlib.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"

namespace lighten::testing {

// A Context for calling the PDF optimiser and verifier directly: the policy given, no nesting,
// no clock; embedded pictures are neither optimised nor verified here.
class PdfTestContext : public Context {
 public:
  explicit PdfTestContext(Policy policy = {}) : policy_(std::move(policy)) {}
  const Policy& policy() const override { return policy_; }
  unsigned depth() const override { return 0; }
  bool out_of_time() const override { return false; }
  Outcome optimize_embedded_under(ByteView, std::string_view, const Policy&) override { return {}; }
  Verdict verify_embedded_under(ByteView, ByteView, const Policy&) override {
    return {false, "not in this test", {}};
  }

 private:
  Policy policy_;
};

inline std::string as_string(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

inline std::vector<uint8_t> as_bytes(const std::string& s) { return {s.begin(), s.end()}; }

// "<< dict /Length n >> stream ... endstream" for an object body.
inline std::string stream_object(const std::string& dict_entries, const std::string& data) {
  return "<< " + dict_entries + " /Length " + std::to_string(data.size()) + " >>\nstream\n" + data +
         "\nendstream";
}

// zlib at level 1: what weak PDF producers write.
inline std::string zlib_fast(const std::string& data) {
  uLongf size = compressBound(uLong(data.size()));
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size,
            reinterpret_cast<const Bytef*>(data.data()), uLong(data.size()), 1);
  out.resize(size);
  return out;
}

// Objects are numbered from 1; object 1 is the catalog. `trailer_extra` goes into the trailer.
inline std::string make_pdf(const std::vector<std::string>& objects,
                            const std::string& version = "1.5",
                            const std::string& trailer_extra = "") {
  std::string pdf = "%PDF-" + version + "\n%\xE2\xE3\xCF\xD3\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  char line[24];
  for (size_t off : offsets) {
    std::snprintf(line, sizeof line, "%010zu 00000 n \n", off);
    pdf += line;
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R " +
         trailer_extra + " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

// Appends an incremental update that replaces object `number` with `body`.
inline std::string append_update(const std::string& pdf, int number, const std::string& body,
                                 int size) {
  const size_t prev = std::stoul(pdf.substr(pdf.rfind("startxref") + 10));
  std::string out = pdf;
  const size_t offset = out.size();
  out += std::to_string(number) + " 0 obj\n" + body + "\nendobj\n";
  const size_t xref = out.size();
  char line[24];
  std::snprintf(line, sizeof line, "%010zu 00000 n \n", offset);
  out += "xref\n" + std::to_string(number) + " 1\n" + line + "trailer\n<< /Size " +
         std::to_string(size) + " /Root 1 0 R /Prev " + std::to_string(prev) + " >>\nstartxref\n" +
         std::to_string(xref) + "\n%%EOF\n";
  return out;
}

}  // namespace lighten::testing

// Stands in for qpdf 11's <qpdf/JSON.hh> when lighten is built with clang (the fuzz build).
// Clang (14 to 16) in C++20 mode with libstdc++ 12 rejects that header: a nested class's
// defaulted virtual destructor destroys a std::vector<JSON> before JSON is complete, and C++20
// makes that destructor constexpr, so clang instantiates it there. lighten never uses qpdf's
// JSON; the other qpdf headers only declare functions that take or return it, for which a
// declaration suffices. The guard is qpdf's own, so the real header is skipped if reached.
#ifndef JSON_HH
#define JSON_HH
class JSON;
#endif

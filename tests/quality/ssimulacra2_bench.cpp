// Usage: ssimulacra2_bench REFERENCE DISTORTED [REPEATS [NEGLIGIBLE_WEIGHT]]
// Prints the SSIMULACRA2 score, the worst tile, the speed (MP/s on one thread) and the process's
// peak resident memory (which includes the two decoded 8-bit images).

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "quality/image_io.h"
#include "quality/ssimulacra2.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s REFERENCE DISTORTED [REPEATS [NEGLIGIBLE_WEIGHT]]\n", argv[0]);
    return 2;
  }
  try {
    const lighten::ImageRgb8 reference = lighten::test::load_image(argv[1]);
    const lighten::ImageRgb8 distorted = lighten::test::load_image(argv[2]);
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
    lighten::Ssimulacra2Options options;
    if (argc > 4) options.negligible_weight = std::atof(argv[4]);
    lighten::Ssimulacra2Result result;
    double best = 1e30;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      result = lighten::ssimulacra2(reference, distorted, options);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      best = std::min(best, elapsed.count());
    }
    const double megapixels = reference.width * static_cast<double>(reference.height) / 1e6;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("ssimulacra2 %.4f worst_tile %.4f at %u,%u\n", result.score,
                result.worst_tile_score, result.worst_tile_x, result.worst_tile_y);
    std::printf("%ux%u (%.2f MP): %.3f s, %.2f MP/s, peak RSS %.1f MB\n", reference.width,
                reference.height, megapixels, best, megapixels / best, usage.ru_maxrss / 1024.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

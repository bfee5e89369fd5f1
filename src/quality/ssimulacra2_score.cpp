// The published weights of SSIMULACRA 2.1 and the score they make of the pooled norms.
#include <cmath>
#include <limits>
#include <span>

#include "quality/ssimulacra2.h"

namespace lighten {
namespace {

// Weights of SSIMULACRA 2.1, one row per scale: for norms n = 0 (mean) then n = 1 (4-norm),
// the maps SSIM, artifact, detail lost. Index 36 c + 6 scale + 3 n + map.
constexpr double kWeights[108] = {
    // X
    0.0,
    0.0007376606707406586,
    0.0,
    0.0,
    0.0007793481682867309,
    0.0,  //
    0.0,
    0.0004371155730107379,
    0.0,
    1.1041726426657346,
    0.00066284834129271,
    0.00015231632783718752,  //
    0.0,
    0.0016406437456599754,
    0.0,
    1.8422455520539298,
    11.441172603757666,
    0.0,  //
    0.0007989109436015163,
    0.000176816438078653,
    0.0,
    1.8787594979546387,
    10.94906990605142,
    0.0,  //
    0.0007289346991508072,
    0.9677937080626833,
    0.0,
    0.00014003424285435884,
    0.9981766977854967,
    0.00031949755934435053,  //
    0.0004550992113792063,
    0.0,
    0.0,
    0.0013648766163243398,
    0.0,
    0.0,  //
    // Y
    0.0,
    0.0,
    0.0,
    7.466890328078848,
    0.0,
    17.445833984131262,  //
    0.0006235601634041466,
    0.0,
    0.0,
    6.683678146179332,
    0.00037724407979611296,
    1.027889937768264,  //
    225.20515300849274,
    0.0,
    0.0,
    19.213238186143016,
    0.0011401524586618361,
    0.001237755635509985,  //
    176.39317598450694,
    0.0,
    0.0,
    24.43300999870476,
    0.28520802612117757,
    0.0004485436923833408,  //
    0.0,
    0.0,
    0.0,
    34.77906344483772,
    44.835625328877896,
    0.0,  //
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,  //
    // B
    0.0,
    0.0008680556573291698,
    0.0,
    0.0,
    0.0,
    0.0,  //
    0.0,
    0.0005313191874358747,
    0.0,
    0.00016533814161379112,
    0.0,
    0.0,  //
    0.0,
    0.0,
    0.0,
    0.0004179171803251336,
    0.0017290828234722833,
    0.0,  //
    0.0020827005846636437,
    0.0,
    0.0,
    8.826982764996862,
    23.19243343998926,
    0.0,  //
    95.1080498811086,
    0.9863978034400682,
    0.9834382792465353,
    0.0012286405048278493,
    171.2667255897307,
    0.9807858872435379,  //
    0.0,
    0.0,
    0.0,
    0.0005130064588990679,
    0.0,
    0.00010854057858411537,
};

}  // namespace

bool ssimulacra2_map_weighted(int num_scales, int scale, int c, int map, double above) {
  const int base = c * num_scales * 6 + scale * 6 + map;
  return kWeights[base] > above || kWeights[base + 3] > above;
}

double ssimulacra2_score(std::span<const Ssimulacra2Scale> scales) {
  double sum = 0.0;
  size_t i = 0;
  for (int c = 0; c < 3; ++c) {
    for (const Ssimulacra2Scale& s : scales) {
      for (int n = 0; n < 2; ++n) {
        sum += kWeights[i++] * std::abs(s.ssim[c * 2 + n]);
        sum += kWeights[i++] * std::abs(s.edge[c * 4 + n]);
        sum += kWeights[i++] * std::abs(s.edge[c * 4 + 2 + n]);
      }
    }
  }
  sum *= 0.9562382616834844;
  sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum +
        6.248496625763138e-05 * sum * sum * sum;
  // NaN (an input the transforms could not read) is the worst score, never a pass.
  if (std::isnan(sum)) return -std::numeric_limits<double>::infinity();
  return sum > 0.0 ? 100.0 - 10.0 * std::pow(sum, 0.6276336467831387) : 100.0;
}

}  // namespace lighten

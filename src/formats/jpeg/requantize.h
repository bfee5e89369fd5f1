// Requantisation in the DCT domain: coarser quantisation tables (never finer than the source's)
// and a per-block rate-distortion choice of each coefficient, with no IDCT or colour round trip.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/uninitialized_vector.h"
#include "formats/jpeg/coefficients.h"

namespace lighten::jpeg {

using QuantTable = std::array<uint16_t, 64>;  // natural (row-major) order, as libjpeg keeps it

// The IJG (Annex K) table scaled to `quality` 1..100 as jpeg_set_quality does, 1..255.
QuantTable ijg_table(int quality, bool chroma);
// The same table at jpeg_quality_scaling's percentage `scale` (quality q >= 50 is 200 - 2q).
QuantTable ijg_table_scaled(int scale, bool chroma);
// Whether `table` is exactly the table a plain encoder writes at some quality 1..100: IJG's
// (libjpeg, most cameras) luma or chroma, or Robidoux's scaled the same way (mozjpeg's default,
// ImageMagick's). lighten's own tables are told apart from these by their dither.
bool is_plain_encoder_table(const QuantTable& table);
// Those tables at `quality` 1..100, as jpeg_set_quality scales them, entries capped at `cap`
// (255 in a baseline file): IJG's luma and chroma, Robidoux's.
std::array<QuantTable, 3> plain_encoder_tables(int quality, int cap = 255);
// The table requantisation writes: N. Robidoux's (mozjpeg's default, luma and chroma alike) at
// `permille` of its values (1000 = quality 50, 2000 - 20q for q >= 50), 1..255, with a finer DC
// (half the scaled entry, at most 8) and the five lowest AC entries at 0.8 of it. At the same
// SSIMULACRA2 Robidoux's shape saved 13-20 % over Annex K on camera photos here, the finer low
// frequencies 0.2-1.8 points more.
QuantTable target_table(int permille);
// Chroma tables of a 4:4:4 source sit at this multiple of the luma's permille: such a source
// spends on chroma what 4:2:0 would not, and coarser chroma steps stand in for the subsampling.
// Measured on the three 4:4:4 camera photos here: 12-24 % smaller at the same floor on two, even
// on the third (4:2:2 sources gained nothing consistent from a milder scale).
inline constexpr double kFullResolutionChromaScale = 2.0;
// The IJG quality whose scaled table is closest to `table` (in log ratio over all entries).
double estimate_quality(const QuantTable& table, bool chroma);

// Bits of each (run, size) AC symbol of one Huffman table class, from symbol statistics.
struct RateModel {
  float ac_bits[256] = {};
  float eob_bits = 4, zrl_bits = 11;
  // At least how many bits cheaper a coefficient's symbol can be after a longer run of zeros than
  // after a shorter one (at the same size, runs of 16 and more paying their ZRLs), and at least
  // 0: the trellis drops an end that trails a later one by more than this.
  float longer_run_advantage = 16;
  static RateModel from_frequencies(const uint32_t (&freq)[256]);
};

struct RdoParams {
  // Weight of squared error (in quantisation steps) against bits; 0 turns RDO off (plain
  // rounding). Scaled per block by its activity: busy blocks mask more error. 1 is mozjpeg's
  // lambda; 0.5 saved about 2 % more at equal SSIMULACRA2 on camera photos here (2 was worse on
  // most, better on some and on text: the search races it, see perceptual.cpp).
  double strength = 0.5;
};

// Requantises one block. `src` holds the source's quantised coefficients (natural order),
// `q_old`/`q_new` the tables (q_new >= q_old entrywise). Writes `dst` and returns the squared
// error in dequantised coefficient units (against the source's coefficients).
double requantize_block(const JCOEF* src, const uint16_t* q_old, const uint16_t* q_new,
                        const RateModel* rate, const RdoParams& rdo, JCOEF* dst);

// The source's coefficients and tables, copied once so that many candidates can be written
// into the CoefficientImage's arrays. The coefficients are copied just before the first apply()
// writes over them (read from the image until then): a search dropped before it confirms
// anything on the whole image never holds a second copy of it.
class Requantizer {
 public:
  // `image` must outlive the Requantizer and be changed only through its apply(). `finest`
  // (per slot, empty: the image's own tables) bounds the tables it writes where the image is
  // finer than the file it stands for: a re-encoding kept finer than its source (subsampling.h).
  // Each used slot must be nowhere finer than the image's own table.
  explicit Requantizer(CoefficientImage& image, std::vector<QuantTable> finest = {});
  // A copy would share the image but not the knowledge of whether it was written yet.
  Requantizer(const Requantizer&) = delete;
  Requantizer& operator=(const Requantizer&) = delete;
  Requantizer(Requantizer&&) = default;
  Requantizer& operator=(Requantizer&&) = default;

  // Tables per quantisation slot: target_table(permille), never finer than finest_tables();
  // slots only chroma uses are coarser for a 4:4:4 YCbCr source (RGB and CMYK planes are all
  // alike; YCCK's chroma keeps the luma's scale).
  std::vector<QuantTable> tables_for(int permille) const;
  // The image's own tables, which its coefficients are quantised with.
  const std::vector<QuantTable>& source_tables() const { return source_tables_; }
  // The finest tables an output may have: `finest` as given, else the image's own.
  const std::vector<QuantTable>& finest_tables() const { return finest_tables_; }
  // Equivalent IJG quality of the source (the luma of finest_tables()).
  double source_quality() const;
  // Squared error per pixel of plain rounding to candidate tables, from every `row_step`-th
  // block row: the cheap distortion estimate the search brackets with.
  class DistortionEstimate {
   public:
    double operator()(const std::vector<QuantTable>& tables) const;

   private:
    friend class Requantizer;
    struct Magnitude {
      uint16_t value;  // |coefficient| in the source's steps
      uint32_t count;
    };
    struct Component {
      int slot = 0;
      double row_scale = 0;                               // all block rows over the sampled ones
      std::array<std::vector<Magnitude>, 64> magnitudes;  // per frequency, sorted, no zeros
    };
    std::vector<Component> components_;
    const std::vector<QuantTable>* source_tables_ = nullptr;
    uint64_t pixels_ = 1;
  };
  // The sample's magnitudes are counted once here, so that each candidate costs a pass over
  // distinct values rather than over blocks.
  DistortionEstimate distortion_estimate(unsigned row_step) const;
  // Writes the requantised coefficients into the image's arrays and sets its output tables.
  // Returns the total squared error (all components).
  double apply(const std::vector<QuantTable>& tables, const RdoParams& rdo) const;
  // Puts the source's coefficients and tables back exactly as they were before apply() (a
  // requantisation to the source's own tables would clamp coefficients that are out of range
  // for baseline JPEG, as an extended-sequential file may hold). Assumes no other Requantizer
  // has written into the same image.
  void restore_source() const;
  // The image apply() writes into.
  CoefficientImage& image() const { return *image_; }

 private:
  struct Component {
    int slot = 0;
    JDIMENSION width = 0, height = 0;          // in blocks
    mutable UninitializedVector<JCOEF> coefs;  // width * height blocks of 64, once copied
  };
  // Component `ci`'s source blocks of block row `row`: the copy once made, else the image's.
  const JCOEF* source_row(size_t ci, JDIMENSION row) const;
  void copy_source() const;

  CoefficientImage* image_;
  mutable bool copied_ = false;
  std::vector<Component> components_;
  std::vector<QuantTable> source_tables_;  // per slot (NUM_QUANT_TBLS), zero when unused
  std::vector<QuantTable> finest_tables_;  // the same, or coarser where `finest` says so
  uint64_t pixels_ = 1;
  double chroma_scale_ = 1.0;  // permille of chroma-only slots against the luma's
};

}  // namespace lighten::jpeg

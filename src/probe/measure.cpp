#include "probe/measure.h"

#include <fcntl.h>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <png.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csetjmp>
#include <cstring>

namespace lighten::probe {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string failure(std::string_view op, const std::string& path, int err) {
  return std::string(op) + " " + path + ": " + std::strerror(err);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// libjpeg reports fatal errors through error_exit; this one jumps back to the one decode call
// that owns the jmp_buf (no shared state between threads).
struct JpegError {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool ended_early;
};

extern "C" void probe_jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

// Warnings pass, as in Pillow, except the data ending early: Pillow then raises "image file is
// truncated", and a loader fails on the file.
extern "C" void probe_jpeg_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF)
    reinterpret_cast<JpegError*>(cinfo->err)->ended_early = true;
}

std::string too_many_pixels(uint64_t pixels, uint64_t max_pixels) {
  return std::to_string(pixels) + " pixels, over --max-pixels " + std::to_string(max_pixels) +
         " (by default Pillow's DecompressionBombError limit)";
}

DecodeTiming decode_jpeg(std::span<const uint8_t> bytes, DecoderStyle style, uint64_t max_pixels,
                         std::vector<uint8_t>& pixels) {
  DecodeTiming result;
  result.label = "jpeg-baseline";
  jpeg_decompress_struct cinfo{};
  JpegError err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = probe_jpeg_error_exit;
  err.pub.emit_message = probe_jpeg_message;
  err.message[0] = '\0';
  err.ended_early = false;
  const auto start = std::chrono::steady_clock::now();
  if (setjmp(err.jump)) {
    // Locals changed after setjmp are indeterminate here: rebuild the result from memory.
    DecodeTiming failed;
    failed.label = cinfo.progressive_mode ? "jpeg-progressive" : "jpeg-baseline";
    failed.error = err.message;
    jpeg_destroy_decompress(&cinfo);
    failed.ms = ms_since(start);
    return failed;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.progressive_mode) result.label = "jpeg-progressive";
  // CMYK cannot be turned into RGB by libjpeg; loaders convert afterwards, as this leaves it.
  // Pillow holds colour images at four bytes a pixel and has libjpeg-turbo write them so (RGBX);
  // the loader's convert("RGB") turns grey into the same.
  if (cinfo.jpeg_color_space != JCS_CMYK && cinfo.jpeg_color_space != JCS_YCCK)
    cinfo.out_color_space = style == DecoderStyle::kPil ? JCS_EXT_RGBX : JCS_RGB;
  if (const uint64_t n = uint64_t(cinfo.image_width) * cinfo.image_height; n > max_pixels) {
    result.error = too_many_pixels(n, max_pixels);
    jpeg_destroy_decompress(&cinfo);
    result.ms = ms_since(start);
    return result;
  }
  jpeg_start_decompress(&cinfo);
  const size_t stride = size_t(cinfo.output_width) * size_t(cinfo.output_components);
  try {
    pixels.resize(stride * (cinfo.output_height + 1));
  } catch (const std::bad_alloc&) {
    result.error = "the pixels do not fit in memory";
    jpeg_destroy_decompress(&cinfo);
    result.ms = ms_since(start);
    return result;
  }
  if (style == DecoderStyle::kDirect) {
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = pixels.data() + stride * cinfo.output_scanline;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
  } else {
    // Pillow's decoder hands each row to its unpacker, which copies it into the image.
    uint8_t* scratch = pixels.data() + stride * cinfo.output_height;
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = scratch;
      if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) break;
      std::memcpy(pixels.data() + stride * (cinfo.output_scanline - 1), scratch, stride);
    }
  }
  jpeg_finish_decompress(&cinfo);
  result.pixels = uint64_t(cinfo.output_width) * cinfo.output_height;
  jpeg_destroy_decompress(&cinfo);
  result.ms = ms_since(start);
  result.ok = !err.ended_early;
  if (err.ended_early) result.error = "the JPEG data ends early (Pillow: image file is truncated)";
  return result;
}

DecodeTiming decode_png(std::span<const uint8_t> bytes, DecoderStyle style, uint64_t max_pixels,
                        std::vector<uint8_t>& pixels) {
  DecodeTiming result;
  result.label = "png";
  const auto start = std::chrono::steady_clock::now();
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    // Pillow holds colour PNGs as RGBX/RGBA (four bytes); torchvision.io as packed RGB.
    image.format = style == DecoderStyle::kPil ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    const uint64_t n = uint64_t(image.width) * image.height;
    if (n > max_pixels) {
      result.error = too_many_pixels(n, max_pixels);
    } else {
      try {
        pixels.resize(PNG_IMAGE_SIZE(image));
        if (png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
          result.ok = true;
          result.pixels = n;
        }
      } catch (const std::bad_alloc&) {
        result.error = "the pixels do not fit in memory";
      }
    }
  }
  if (!result.ok && result.error.empty()) result.error = image.message;
  png_image_free(&image);
  result.ms = ms_since(start);
  return result;
}

}  // namespace

ReadTiming TimedReader::read(const std::string& path, std::vector<uint8_t>& bytes) {
  ReadTiming t;
  auto start = std::chrono::steady_clock::now();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  t.open_ms = ms_since(start);
  if (fd.get() < 0) {
    t.error = failure("open", path, errno);
    return t;
  }
  if (latency_ms_ > 0) {
    start = std::chrono::steady_clock::now();
    clock_.sleep_for(latency_ms_ / 1000.0);
    t.delay_ms = ms_since(start);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    t.error = failure("stat", path, errno);
    return t;
  }
  if (link_ && one_stream_) link_->drain();
  const uint64_t size = uint64_t(st.st_size);
  // Room for the first chunk; the rest is kept only for an image the probe decodes.
  bytes.resize(size_t(std::min<uint64_t>(size, kChunk)));
  bool keep = true, decided = size <= kChunk;
  uint64_t got = 0;
  while (got < size) {
    if (!decided && got >= kChunk) {
      decided = true;
      const Kind kind = sniff(bytes);
      keep = (kind == Kind::kJpeg || kind == Kind::kPng) && size <= kMaxKeptBytes;
      try {
        if (keep) bytes.resize(size_t(size));
      } catch (const std::bad_alloc&) {
        keep = false;  // read through, not decoded: the image's bytes do not fit in memory
        bytes.resize(kChunk);
      }
    }
    const size_t want = keep ? size_t(std::min<uint64_t>(kChunk, bytes.size() - got))
                             : size_t(std::min<uint64_t>(kChunk, size - got));
    uint8_t* into = keep ? bytes.data() + got : scratch(want);
    start = std::chrono::steady_clock::now();
    // The time the wait took, not the time asked for: a sleep overshoots by 50-90 us, which
    // at 10 Gbit/s is a third of a 256 kB chunk's time and would count as local reading.
    if (link_) {
      (void)link_->acquire(double(want));
      t.link_wait_ms += ms_since(start);
    }
    const ssize_t n = ::read(fd.get(), into, want);
    t.read_ms += ms_since(start);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      t.error = failure("read", path, errno);
      return t;
    }
    if (n == 0) break;  // the file shrank while it was read
    got += uint64_t(n);
  }
  if (keep) bytes.resize(size_t(got));
  t.whole = keep;
  t.bytes = got;
  t.ok = true;
  return t;
}

uint8_t* TimedReader::scratch(size_t size) {
  if (scratch_.size() < size) scratch_.resize(size);
  return scratch_.data();
}

std::vector<uint8_t> read_head(const std::string& path, size_t limit) {
  std::vector<uint8_t> head(limit);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return {};
  size_t got = 0;
  while (got < limit) {
    const ssize_t n = ::pread(fd.get(), head.data() + got, limit - got, off_t(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  head.resize(got);
  return head;
}

bool evict_from_cache(const std::string& path, std::string& problem) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    problem = failure("open", path, errno);
    return false;
  }
  if (int err = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED); err != 0) {
    problem = failure("posix_fadvise(DONTNEED)", path, err);
    return false;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || st.st_size == 0) return true;
  // Dirty pages and file systems without a page cache of their own (tmpfs, some overlays)
  // keep the pages; mincore() tells whether they really went.
  void* map = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) return true;  // cannot check; assume the advice was taken
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size_t(st.st_size) + page - 1) / page);
  size_t cached = 0;
  if (::mincore(map, size_t(st.st_size), resident.data()) == 0)
    for (unsigned char r : resident) cached += r & 1;
  ::munmap(map, size_t(st.st_size));
  if (cached * 2 > resident.size()) {
    problem = path + ": " + std::to_string(cached * 100 / resident.size()) +
              " % of its pages stayed in the page cache after posix_fadvise(DONTNEED) (tmpfs, "
              "overlay or dirty pages?); cold figures are warm here. For cold figures, probe "
              "the files where they are stored (a disk or network file system with a page "
              "cache of its own)";
    return false;
  }
  return true;
}

DecodeTiming decode_image(Kind kind, std::span<const uint8_t> bytes, DecoderStyle style,
                          uint64_t max_pixels) {
  std::vector<uint8_t> pixels;
  if (kind == Kind::kJpeg) return decode_jpeg(bytes, style, max_pixels, pixels);
  if (kind == Kind::kPng) return decode_png(bytes, style, max_pixels, pixels);
  return {};
}

}  // namespace lighten::probe

// A vector whose resize leaves new elements uninitialised, for buffers that are written in full
// right after: a decoder's samples, a copy of coefficients. Zero-filling them first was about 4 %
// of a perceptual JPEG run (a 12 MP decode is 36 MB, filled once more per candidate size).
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace lighten {

template <class T, class Base = std::allocator<T>>
struct DefaultInitAllocator : Base {
  static_assert(std::is_trivially_default_constructible_v<T>);
  using Base::Base;
  template <class U>
  struct rebind {
    using other =
        DefaultInitAllocator<U, typename std::allocator_traits<Base>::template rebind_alloc<U>>;
  };
  // Default-initialisation: nothing for a trivial type.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<Base>::construct(static_cast<Base&>(*this), p,
                                           std::forward<Args>(args)...);
  }
};

template <class T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace lighten

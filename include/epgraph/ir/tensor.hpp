// dtype, TensorMeta, the tensor_traits customization point and HostTensor.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../error.hpp"

namespace epgraph {

/// Element type of a tensor. The numeric values are those of torch.export's serialization schema
/// (`ScalarType` in torch/_export/serde/schema.yaml); the names are torch's (`torch.float32`).
enum class dtype : std::int32_t {
  unknown = 0,
  uint8 = 1,
  int8 = 2,
  int16 = 3,
  int32 = 4,
  int64 = 5,
  float16 = 6,
  float32 = 7,
  float64 = 8,
  complex32 = 9,
  complex64 = 10,
  complex128 = 11,
  bool_ = 12,
  bfloat16 = 13,
  uint16 = 28,
  float8_e4m3fn = 29,
  float8_e5m2 = 30,
  float8_e4m3fnuz = 31,
  float8_e5m2fnuz = 32,
  float8_e8m0fnu = 33,
  uint32 = 34,
  uint64 = 35,
};

/// Tensor layout; values of the schema's `Layout` enum.
enum class Layout : std::int32_t {
  Unknown = 0,
  SparseCoo = 1,
  SparseCsr = 2,
  SparseCsc = 3,
  SparseBsr = 4,
  SparseBsc = 5,
  _mkldnn = 6,
  Strided = 7,
};

/// Memory format; values of the schema's `MemoryFormat` enum.
enum class MemoryFormat : std::int32_t {
  Unknown = 0,
  ContiguousFormat = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3,
  PreserveFormat = 4,
};

/// Torch's name of a dtype without the `torch.` prefix ("float32", "bool"), or "" when the value
/// is not a known dtype. O(1). Mirrors `str(torch.float32)`.
[[nodiscard]] inline std::string_view dtype_name(dtype d) noexcept {
  switch (d) {
    case dtype::unknown: return "unknown";
    case dtype::uint8: return "uint8";
    case dtype::int8: return "int8";
    case dtype::int16: return "int16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::float16: return "float16";
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::complex32: return "complex32";
    case dtype::complex64: return "complex64";
    case dtype::complex128: return "complex128";
    case dtype::bool_: return "bool";
    case dtype::bfloat16: return "bfloat16";
    case dtype::uint16: return "uint16";
    case dtype::float8_e4m3fn: return "float8_e4m3fn";
    case dtype::float8_e5m2: return "float8_e5m2";
    case dtype::float8_e4m3fnuz: return "float8_e4m3fnuz";
    case dtype::float8_e5m2fnuz: return "float8_e5m2fnuz";
    case dtype::float8_e8m0fnu: return "float8_e8m0fnu";
    case dtype::uint32: return "uint32";
    case dtype::uint64: return "uint64";
  }
  return "";
}

/// The dtype called `name` ("float32" or "torch.float32"; also torch's aliases "float", "half",
/// "double", "long", "int", "short", "bool"). Throws value_error "Unknown dtype '<name>'".
/// O(number of dtypes).
[[nodiscard]] inline dtype parse_dtype(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  if (name == "float") return dtype::float32;
  if (name == "half") return dtype::float16;
  if (name == "double") return dtype::float64;
  if (name == "long") return dtype::int64;
  if (name == "int") return dtype::int32;
  if (name == "short") return dtype::int16;
  for (int v = 1; v <= 35; ++v) {
    auto d = static_cast<dtype>(v);
    auto n = dtype_name(d);
    if (!n.empty() && n == name) return d;
  }
  throw value_error("Unknown dtype '" + std::string(name) + "'");
}

/// Size in bytes of one element of `d` (torch's `element_size()`); 0 for `dtype::unknown` and
/// values outside the enum. O(1).
[[nodiscard]] inline std::size_t element_size(dtype d) noexcept {
  switch (d) {
    case dtype::uint8:
    case dtype::int8:
    case dtype::bool_:
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
    case dtype::float8_e4m3fnuz:
    case dtype::float8_e5m2fnuz:
    case dtype::float8_e8m0fnu: return 1;
    case dtype::int16:
    case dtype::float16:
    case dtype::bfloat16:
    case dtype::uint16: return 2;
    case dtype::int32:
    case dtype::uint32:
    case dtype::complex32: return 4;
    case dtype::int64:
    case dtype::uint64:
    case dtype::float64:
    case dtype::complex64: return 8;
    case dtype::float32: return 4;
    case dtype::complex128: return 16;
    case dtype::unknown: return 0;
  }
  return 0;
}

/// Torch's name of a layout without the `torch.` prefix ("strided", "sparse_coo"). O(1).
[[nodiscard]] inline std::string_view layout_name(Layout l) noexcept {
  switch (l) {
    case Layout::Unknown: return "unknown";
    case Layout::SparseCoo: return "sparse_coo";
    case Layout::SparseCsr: return "sparse_csr";
    case Layout::SparseCsc: return "sparse_csc";
    case Layout::SparseBsr: return "sparse_bsr";
    case Layout::SparseBsc: return "sparse_bsc";
    case Layout::_mkldnn: return "_mkldnn";
    case Layout::Strided: return "strided";
  }
  return "";
}

/// Torch's name of a memory format without the `torch.` prefix ("contiguous_format"). O(1).
[[nodiscard]] inline std::string_view memory_format_name(MemoryFormat m) noexcept {
  switch (m) {
    case MemoryFormat::Unknown: return "unknown";
    case MemoryFormat::ContiguousFormat: return "contiguous_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    case MemoryFormat::PreserveFormat: return "preserve_format";
  }
  return "";
}

/// A device such as `cpu` or `cuda:0` (schema `Device{type, index}`).
struct Device {
  std::string type = "cpu";           ///< "cpu", "cuda", "meta", ...
  std::optional<std::int64_t> index;  ///< device ordinal, absent for "cpu"

  /// Torch's `str(device)`: "cpu", "cuda:0". O(1).
  [[nodiscard]] std::string str() const {
    return index ? type + ":" + std::to_string(*index) : type;
  }
  friend bool operator==(const Device& a, const Device& b) {
    return a.type == b.type && a.index == b.index;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

/// A symbolic size expression (schema `SymExpr`): the sympy text such as "s0" or "2*s0" and, when
/// known, the example value it had at export time.
struct SymExpr {
  std::string expr;
  std::optional<std::int64_t> hint;
  friend bool operator==(const SymExpr& a, const SymExpr& b) {
    return a.expr == b.expr && a.hint == b.hint;
  }
};

/// One size, stride or offset of a tensor: a concrete integer or a symbolic expression
/// (schema `SymInt`: `as_int` or `as_expr`).
using SymInt = std::variant<std::int64_t, SymExpr>;

/// What torch.export records about a tensor value without its data: FX's `meta["val"]` (a fake
/// tensor) / the schema's `TensorMeta`.
struct TensorMeta {
  epgraph::dtype dtype = epgraph::dtype::float32;
  std::vector<SymInt> sizes;
  std::vector<SymInt> strides;
  SymInt storage_offset = std::int64_t{0};
  Device device;
  Layout layout = Layout::Strided;
  bool requires_grad = false;

  friend bool operator==(const TensorMeta& a, const TensorMeta& b) {
    return a.dtype == b.dtype && a.sizes == b.sizes && a.strides == b.strides &&
           a.storage_offset == b.storage_offset && a.device == b.device && a.layout == b.layout &&
           a.requires_grad == b.requires_grad;
  }
  friend bool operator!=(const TensorMeta& a, const TensorMeta& b) { return !(a == b); }
};

/// Row-major (contiguous) strides for `sizes`, in elements (a size of 0 counts as 1, as in
/// torch). Products that do not fit int64 wrap modulo 2^64 instead of overflowing: that only
/// happens for an empty tensor with huge other sizes, whose strides never address data (torch
/// refuses such a tensor: "Stride calculation overflowed"). O(rank).
[[nodiscard]] inline std::vector<std::int64_t> contiguous_strides(
    const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i > 1; --i) {
    const std::int64_t size = sizes[i - 1] == 0 ? 1 : sizes[i - 1];
    strides[i - 2] = static_cast<std::int64_t>(static_cast<std::uint64_t>(strides[i - 1]) *
                                               static_cast<std::uint64_t>(size));
  }
  return strides;
}

/// Number of elements of a tensor of shape `sizes`. Throws value_error when a size is negative
/// ("Tensor size -1 at dimension 0 is negative") or the product overflows int64. O(rank).
[[nodiscard]] inline std::int64_t checked_numel(const std::vector<std::int64_t>& sizes) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::int64_t s = sizes[i];
    if (s < 0) {
      throw value_error("Tensor size " + std::to_string(s) + " at dimension " + std::to_string(i) +
                        " is negative");
    }
    if (s != 0 && n > std::numeric_limits<std::int64_t>::max() / s) {
      throw value_error("Tensor of " + std::to_string(sizes.size()) +
                        " dimensions has more elements than int64 can count");
    }
    n *= s;
  }
  return n;
}

/// Customization point: tells epgraph about the host project's tensor type `T`. Specialize it
/// with four static functions:
///
///     static epgraph::dtype dtype(const T&);
///     static std::vector<std::int64_t> sizes(const T&);
///     static std::vector<std::int64_t> strides(const T&);   // in elements
///     static epgraph::Device device(const T&);
///
/// epgraph never reads a tensor's data through these traits; it only fills node metadata.
template <class T, class = void>
struct tensor_traits;

/// The TensorMeta (FX `meta["val"]` equivalent) of a concrete tensor, through tensor_traits<T>.
/// requires_grad is false and layout strided. O(rank).
template <class T>
[[nodiscard]] TensorMeta tensor_meta_of(const T& tensor) {
  using traits = tensor_traits<T>;
  TensorMeta meta;
  meta.dtype = traits::dtype(tensor);
  for (std::int64_t s : traits::sizes(tensor)) meta.sizes.emplace_back(s);
  for (std::int64_t s : traits::strides(tensor)) meta.strides.emplace_back(s);
  meta.device = traits::device(tensor);
  return meta;
}

namespace detail {

// IEEE-754 binary32 -> binary16 with round-to-nearest-even.
inline std::uint16_t float_to_half_bits(float value) noexcept {
  std::uint32_t x = 0;
  std::memcpy(&x, &value, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

// IEEE-754 binary32 -> bfloat16 with round-to-nearest-even.
inline std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  std::uint32_t x = 0;
  std::memcpy(&x, &value, sizeof x);
  if (std::isnan(value)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

template <class V>
void fill_as(std::vector<std::byte>& bytes, V v) {
  for (std::size_t off = 0; off + sizeof(V) <= bytes.size(); off += sizeof(V)) {
    std::memcpy(bytes.data() + off, &v, sizeof(V));
  }
}

// torch's name of a dtype's C++ type in its conversion errors (c10::checked_convert).
inline const char* fill_type_name(dtype d) noexcept {
  switch (d) {
    case dtype::uint8: return "uint8_t";
    case dtype::int8: return "int8_t";
    case dtype::int16: return "int16_t";
    case dtype::int32: return "int";
    case dtype::int64: return "int64_t";
    case dtype::uint16: return "uint16_t";
    case dtype::uint32: return "uint32_t";
    case dtype::uint64: return "uint64_t";
    case dtype::float16: return "c10::Half";
    case dtype::bfloat16: return "c10::BFloat16";
    case dtype::float32: return "float";
    case dtype::float64: return "double";
    default: return "?";
  }
}

// torch's report_overflow: "value cannot be converted to type uint8_t without overflow".
[[noreturn]] inline void report_fill_overflow(dtype d) {
  throw value_error(std::string("value cannot be converted to type ") + fill_type_name(d) +
                    " without overflow");
}

// A double converted to the integer type T as c10::checked_convert<T, double> does: NaN and
// values outside [lowest, max] are refused, the rest truncated toward zero. For types narrower
// than 64 bits, max and lowest are exact doubles.
template <class T>
void fill_checked(std::vector<std::byte>& bytes, double value, dtype d) {
  const auto lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  const auto max = static_cast<double>(std::numeric_limits<T>::max());
  if (std::isnan(value) || value < lowest || value > max) report_fill_overflow(d);
  fill_as(bytes, static_cast<T>(value));
}

}  // namespace detail

/// Where the bytes of a tensor that have not been read yet come from: e.g. the archive entry a
/// tensor was loaded from (epgraph::archive makes them; the core only calls read()). Shared,
/// immutable; implementations must be safe to call from several threads.
class tensor_source {
 public:
  virtual ~tensor_source() = default;
  /// The tensor's bytes (row-major, little-endian). May throw (epgraph::archive::archive_error
  /// when the archive is missing or changed). O(bytes).
  [[nodiscard]] virtual std::vector<std::byte> read() const = 0;
};

/// The ready tensor type for programs whose host has none: dtype, sizes, contiguous strides and
/// owned little-endian bytes on the CPU. Copies are deep.
///
/// Lazy tensors: a tensor made by from_source (load_archive does) holds no bytes until they are
/// first needed (bytes(), data(), comparison), then reads them once from its source and keeps
/// them. As long as it is not written through data(), source() still names where its bytes came
/// from, which lets save_archive copy them from file to file without reading them. The first
/// read of a lazy tensor's bytes must not race with another access to the same object (as for a
/// non-const call); distinct copies may be read concurrently.
class HostTensor {
 public:
  /// An empty float32 scalar-less tensor of shape [0].
  HostTensor() : HostTensor(dtype::float32, {0}) {}

  /// A zero-filled tensor. Throws value_error for a negative size, an element count or byte count
  /// that overflows, or a dtype of unknown size. O(bytes).
  HostTensor(dtype type, std::vector<std::int64_t> sizes)
      : dtype_(type), sizes_(std::move(sizes)), strides_(contiguous_strides(sizes_)) {
    data_.resize(checked_nbytes(type, sizes_));
    nbytes_ = data_.size();
  }

  /// Same as the constructor: `HostTensor::zeros(dtype::float32, {1, 8, 128, 64})`.
  [[nodiscard]] static HostTensor zeros(dtype type, std::vector<std::int64_t> sizes) {
    return HostTensor(type, std::move(sizes));
  }

  /// A tensor whose every element is the Python float `value` converted to `type` as
  /// `torch.full(sizes, value, dtype=type)` converts it (c10's checked_convert): an integer
  /// dtype truncates toward zero (3.7 -> 3, -0.5 -> 0) and refuses NaN, infinities and values
  /// outside its range (uint8: [0, 255], so -1.0 and 255.5 are refused); float16, bfloat16 and
  /// float32 keep NaN and infinities, round to nearest even and refuse finite values beyond
  /// their largest finite value (float16: 65504, so 65519.0 is refused) -- except that torch
  /// fills a one-element float16 / bfloat16 tensor without that check (65519.0 -> 65504,
  /// 1e6 -> inf), which is mirrored; bool is `value != 0` (NaN -> true); float64 keeps the value
  /// (-0.0 included). Refused values throw value_error with torch's message, "value cannot be
  /// converted to type uint8_t without overflow" (type names as torch prints them: uint8_t,
  /// int8_t, int16_t, int, int64_t, uint16_t, uint32_t, uint64_t, c10::Half, c10::BFloat16,
  /// float). Supports bool, integer, float16, bfloat16, float32 and float64 dtypes; others
  /// throw value_error "Cannot fill a tensor of dtype <name>". Also throws what the constructor
  /// throws. Strong guarantee. O(bytes).
  [[nodiscard]] static HostTensor full(dtype type, std::vector<std::int64_t> sizes, double value) {
    HostTensor t(type, std::move(sizes));
    const bool unchecked_reduced = t.numel() == 1;
    auto& b = t.data_;
    if (value == 0.0 && !std::signbit(value) && element_size(type) != 0 &&
        std::string_view(detail::fill_type_name(type)) != "?") {
      return t;  // +0.0 is all-zero bytes in every supported dtype
    }
    auto check = [&](double lowest, double max) {
      if (std::isnan(value) || value < lowest || value > max) detail::report_fill_overflow(type);
    };
    auto check_float = [&](double max) {
      if (std::isfinite(value) && (value < -max || value > max)) {
        detail::report_fill_overflow(type);
      }
    };
    switch (type) {
      case dtype::bool_: detail::fill_as<std::uint8_t>(b, value != 0.0 ? 1 : 0); break;
      case dtype::uint8: detail::fill_checked<std::uint8_t>(b, value, type); break;
      case dtype::int8: detail::fill_checked<std::int8_t>(b, value, type); break;
      case dtype::int16: detail::fill_checked<std::int16_t>(b, value, type); break;
      case dtype::int32: detail::fill_checked<std::int32_t>(b, value, type); break;
      case dtype::uint16: detail::fill_checked<std::uint16_t>(b, value, type); break;
      case dtype::uint32: detail::fill_checked<std::uint32_t>(b, value, type); break;
      case dtype::int64: {
        // The range check compares with INT64_MAX as a double, 2^63, which passes 2^63 itself:
        // torch's conversion then gives INT64_MIN (x86-64 cvttsd2si).
        check(-9223372036854775808.0, 9223372036854775808.0);
        detail::fill_as(b, value >= 9223372036854775808.0 ? std::numeric_limits<std::int64_t>::min()
                                                          : static_cast<std::int64_t>(value));
        break;
      }
      case dtype::uint64: {
        // Likewise 2^64 passes (UINT64_MAX as a double) and converts to 0.
        check(0.0, 18446744073709551616.0);
        detail::fill_as(b, value >= 18446744073709551616.0 ? std::uint64_t{0}
                                                           : static_cast<std::uint64_t>(value));
        break;
      }
      case dtype::float16:
        if (!unchecked_reduced) check_float(65504.0);
        detail::fill_as(b, detail::float_to_half_bits(static_cast<float>(value)));
        break;
      case dtype::bfloat16:
        if (!unchecked_reduced) check_float(3.3895313892515355e38);
        detail::fill_as(b, detail::float_to_bfloat16_bits(static_cast<float>(value)));
        break;
      case dtype::float32:
        check_float(static_cast<double>(std::numeric_limits<float>::max()));
        detail::fill_as(b, static_cast<float>(value));
        break;
      case dtype::float64: detail::fill_as(b, value); break;
      default: throw value_error("Cannot fill a tensor of dtype " + std::string(dtype_name(type)));
    }
    return t;
  }

  /// A tensor whose every element is the Python int (or bool) `value` converted to `type` as
  /// `torch.full(sizes, value, dtype=type)` converts it: a signed integer dtype refuses values
  /// outside its range; an unsigned one wraps a negative value whose magnitude fits it (torch's
  /// two's-complement rule: -1 -> 255 for uint8, -255 -> 1) and refuses the rest (300 and -256
  /// for uint8; uint64 takes every int64); float16 / bfloat16 refuse values beyond their largest
  /// finite value (70000 for float16) but for a one-element tensor (see the double overload);
  /// float32 / float64 round to nearest; bool is `value != 0`. An unsigned `value` above
  /// INT64_MAX is torch's uint64 scalar: only uint64, float and bool dtypes take it. Throws
  /// value_error "value cannot be converted to type <name> without overflow" as the double
  /// overload does, and "Cannot fill a tensor of dtype <name>". Strong guarantee. O(bytes).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  [[nodiscard]] static HostTensor full(dtype type, std::vector<std::int64_t> sizes, I value) {
    HostTensor t(type, std::move(sizes));
    if (value == 0 &&
        (type == dtype::bool_ || std::string_view(detail::fill_type_name(type)) != "?")) {
      return t;  // 0 is all-zero bytes in every supported dtype
    }
    const bool big = std::is_unsigned_v<I> && !std::is_same_v<I, bool> &&
                     static_cast<std::uint64_t>(value) >
                         static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    const auto u = static_cast<std::uint64_t>(value);  // two's complement of a negative value
    const auto v = static_cast<std::int64_t>(u);       // meaningful when !big
    auto fits = [&](std::int64_t lowest, std::uint64_t max) {
      if (big) return u <= max;
      if (v >= 0) return static_cast<std::uint64_t>(v) <= max;
      if (lowest == 0) return (std::uint64_t{0} - u) <= max;  // unsigned: wraps
      return v >= lowest;
    };
    auto store = [&](auto tag, std::int64_t lowest, std::uint64_t max) {
      using T = decltype(tag);
      if (!fits(lowest, max)) detail::report_fill_overflow(type);
      detail::fill_as(t.data_, static_cast<T>(u));  // modulo 2^bits: the wrap torch does
    };
    const bool unchecked_reduced = t.numel() == 1;
    auto as_float = [&]() { return big ? static_cast<float>(u) : static_cast<float>(v); };
    auto check_float = [&](std::uint64_t max) {
      if (!unchecked_reduced && !fits(-static_cast<std::int64_t>(max), max)) {
        detail::report_fill_overflow(type);
      }
    };
    switch (type) {
      case dtype::bool_: detail::fill_as<std::uint8_t>(t.data_, u != 0 ? 1 : 0); break;
      case dtype::uint8: store(std::uint8_t{}, 0, 0xffu); break;
      case dtype::int8: store(std::int8_t{}, -128, 127); break;
      case dtype::int16: store(std::int16_t{}, -32768, 32767); break;
      case dtype::int32:
        store(std::int32_t{}, std::numeric_limits<std::int32_t>::min(), 0x7fffffffu);
        break;
      case dtype::int64:
        store(std::int64_t{}, std::numeric_limits<std::int64_t>::min(),
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
        break;
      case dtype::uint16: store(std::uint16_t{}, 0, 0xffffu); break;
      case dtype::uint32: store(std::uint32_t{}, 0, 0xffffffffu); break;
      case dtype::uint64:
        store(std::uint64_t{}, 0, std::numeric_limits<std::uint64_t>::max());
        break;
      case dtype::float16:
        check_float(65504);
        detail::fill_as(t.data_, detail::float_to_half_bits(as_float()));
        break;
      case dtype::bfloat16:
        detail::fill_as(t.data_, detail::float_to_bfloat16_bits(as_float()));  // max > 2^64
        break;
      case dtype::float32: detail::fill_as(t.data_, as_float()); break;
      case dtype::float64:
        detail::fill_as(t.data_, big ? static_cast<double>(u) : static_cast<double>(v));
        break;
      default: throw value_error("Cannot fill a tensor of dtype " + std::string(dtype_name(type)));
    }
    return t;
  }

  /// A tensor that takes ownership of `bytes` (row-major, little-endian). Throws value_error
  /// "Tensor data has N bytes but dtype float32 and sizes [2, 3] need M" when they disagree.
  /// O(1) besides the checks.
  [[nodiscard]] static HostTensor from_bytes(dtype type, std::vector<std::int64_t> sizes,
                                             std::vector<std::byte> bytes) {
    const std::size_t need = checked_nbytes(type, sizes);
    if (bytes.size() != need) {
      std::string shape = "[";
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        shape += (i ? ", " : "") + std::to_string(sizes[i]);
      }
      shape += "]";
      throw value_error("Tensor data has " + std::to_string(bytes.size()) + " bytes but dtype " +
                        std::string(dtype_name(type)) + " and sizes " + shape + " need " +
                        std::to_string(need));
    }
    HostTensor t;
    t.dtype_ = type;
    t.sizes_ = std::move(sizes);
    t.strides_ = contiguous_strides(t.sizes_);
    t.data_ = std::move(bytes);
    t.nbytes_ = t.data_.size();
    return t;
  }

  /// A lazy tensor whose bytes (numel * element size of them, row-major, little-endian) are read
  /// from `source` (not null) when first needed. Throws value_error as the constructor does for
  /// bad sizes or dtype, and value_error "HostTensor::from_source: null source". O(rank): reads
  /// nothing. A read that later gives the wrong number of bytes throws value_error as from_bytes.
  [[nodiscard]] static HostTensor from_source(dtype type, std::vector<std::int64_t> sizes,
                                              std::shared_ptr<const tensor_source> source) {
    if (!source) throw value_error("HostTensor::from_source: null source");
    const std::size_t need = checked_nbytes(type, sizes);
    HostTensor t;
    t.dtype_ = type;
    t.sizes_ = std::move(sizes);
    t.strides_ = contiguous_strides(t.sizes_);
    t.nbytes_ = need;
    t.loaded_ = false;
    t.source_ = std::move(source);
    return t;
  }

  /// Element type.
  [[nodiscard]] epgraph::dtype scalar_type() const noexcept { return dtype_; }
  /// Shape.
  [[nodiscard]] const std::vector<std::int64_t>& sizes() const noexcept { return sizes_; }
  /// Strides in elements (always contiguous).
  [[nodiscard]] const std::vector<std::int64_t>& strides() const noexcept { return strides_; }
  /// Number of elements.
  [[nodiscard]] std::int64_t numel() const { return checked_numel(sizes_); }
  /// Size of the data in bytes (known without reading a lazy tensor's bytes).
  [[nodiscard]] std::size_t nbytes() const noexcept { return nbytes_; }
  /// The bytes, row-major little-endian; a lazy tensor reads them from its source first (and
  /// keeps its source: reading does not count as a change). Throws what the source's read()
  /// throws, and value_error when it returns the wrong number of bytes; the tensor is unchanged
  /// then (strong guarantee). O(bytes) for the first read of a lazy tensor, O(1) otherwise.
  [[nodiscard]] const std::vector<std::byte>& bytes() const {
    load();
    return data_;
  }
  /// The bytes, writable; the size must not be changed by the caller. Reads a lazy tensor's bytes
  /// first (throws as bytes() does) and forgets its source: the tensor counts as changed from
  /// then on, and save_archive writes its bytes.
  [[nodiscard]] std::byte* data() {
    load();
    source_.reset();
    return data_.data();
  }
  /// Where this tensor's bytes come from, when it was made by from_source and not written since
  /// through data(); null otherwise.
  [[nodiscard]] const std::shared_ptr<const tensor_source>& source() const noexcept {
    return source_;
  }
  /// Whether the bytes are in memory (always, unless made by from_source and not read yet).
  [[nodiscard]] bool is_loaded() const noexcept { return loaded_; }

  /// Same dtype, sizes and bytes (two unchanged tensors of the same source are equal without
  /// reading it). Throws as bytes() does.
  friend bool operator==(const HostTensor& a, const HostTensor& b) {
    if (a.dtype_ != b.dtype_ || a.sizes_ != b.sizes_) return false;
    if (a.source_ && a.source_ == b.source_) return true;
    return a.bytes() == b.bytes();
  }
  friend bool operator!=(const HostTensor& a, const HostTensor& b) { return !(a == b); }

 private:
  static std::size_t checked_nbytes(epgraph::dtype type, const std::vector<std::int64_t>& sizes) {
    const std::size_t esize = element_size(type);
    if (esize == 0) {
      throw value_error("Tensor dtype " + std::to_string(static_cast<int>(type)) +
                        " has no known element size");
    }
    const auto n = static_cast<std::uint64_t>(checked_numel(sizes));
    if (n > std::numeric_limits<std::size_t>::max() / esize ||
        n * esize > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
      throw value_error("Tensor of " + std::to_string(n) + " elements of dtype " +
                        std::string(dtype_name(type)) + " is too large to hold in memory");
    }
    return static_cast<std::size_t>(n * esize);
  }

  void load() const {
    if (loaded_) return;
    std::vector<std::byte> bytes = source_->read();
    if (bytes.size() != nbytes_) {
      throw value_error("Tensor data has " + std::to_string(bytes.size()) + " bytes but dtype " +
                        std::string(dtype_name(dtype_)) + " and its sizes need " +
                        std::to_string(nbytes_) + " (read from the tensor's source)");
    }
    data_ = std::move(bytes);
    loaded_ = true;
  }

  epgraph::dtype dtype_ = epgraph::dtype::float32;
  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> strides_;
  mutable std::vector<std::byte> data_;  // empty until loaded_ for a lazy tensor
  std::size_t nbytes_ = 0;
  mutable bool loaded_ = true;
  std::shared_ptr<const tensor_source> source_;  // null unless lazy-made and unchanged
};

/// tensor_traits for the bundled HostTensor.
template <>
struct tensor_traits<HostTensor> {
  static epgraph::dtype dtype(const HostTensor& t) noexcept { return t.scalar_type(); }
  static std::vector<std::int64_t> sizes(const HostTensor& t) { return t.sizes(); }
  static std::vector<std::int64_t> strides(const HostTensor& t) { return t.strides(); }
  static Device device(const HostTensor&) { return Device{}; }
};

}  // namespace epgraph

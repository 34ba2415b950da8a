// tensor_data_traits: how archive weight bytes become a user tensor type and back.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "../tensor.hpp"

namespace epgraph::archive {

/// Customization point: how load_archive makes a `T` from an archive's raw weight bytes and how
/// save_archive gets a `T`'s bytes back (the core's tensor_traits never touches data). Specialize
/// it with two static functions:
///
///     // `bytes`: numel * element_size(type) bytes, row-major (contiguous), little-endian.
///     static T from_bytes(epgraph::dtype type, std::vector<std::int64_t> sizes,
///                         std::vector<std::byte> bytes);
///     // The tensor's elements, row-major (contiguous), little-endian, numel * element_size
///     // bytes (any contiguous container of std::byte with data() and size()).
///     static std::vector<std::byte> to_bytes(const T& tensor);
///
/// The tensor's dtype, sizes and device are read through epgraph::tensor_traits<T>.
template <class T, class = void>
struct tensor_data_traits;

/// tensor_data_traits for the bundled HostTensor.
template <>
struct tensor_data_traits<HostTensor> {
  /// HostTensor::from_bytes (throws its value_error when the sizes disagree).
  static HostTensor from_bytes(epgraph::dtype type, std::vector<std::int64_t> sizes,
                               std::vector<std::byte> bytes) {
    return HostTensor::from_bytes(type, std::move(sizes), std::move(bytes));
  }
  /// The tensor's bytes (a reference: no copy).
  static const std::vector<std::byte>& to_bytes(const HostTensor& tensor) noexcept {
    return tensor.bytes();
  }
};

}  // namespace epgraph::archive

// tensor_data_traits: how archive weight bytes become a user tensor type and back.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "../ir/tensor.hpp"

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
/// and, optionally, two more for lazy weights (both or neither):
///
///     // A tensor whose bytes are read from `source` (source->read()) when first needed.
///     static T from_source(epgraph::dtype type, std::vector<std::int64_t> sizes,
///                          std::shared_ptr<const epgraph::tensor_source> source);
///     // The source the tensor was made from while its bytes are unchanged; null otherwise.
///     static std::shared_ptr<const epgraph::tensor_source> source(const T& tensor);
///
/// With them, load_archive reads no weight bytes and save_archive copies the entries of
/// unchanged tensors from the source archive without reading them; without them, load_archive
/// reads every weight (from_bytes) and save_archive writes to_bytes.
///
/// The tensor's dtype, sizes and device are read through epgraph::tensor_traits<T>.
template <class T, class = void>
struct tensor_data_traits;

/// tensor_data_traits for the bundled HostTensor (lazy: see HostTensor::from_source).
template <>
struct tensor_data_traits<HostTensor> {
  /// HostTensor::from_bytes (throws its value_error when the sizes disagree).
  static HostTensor from_bytes(epgraph::dtype type, std::vector<std::int64_t> sizes,
                               std::vector<std::byte> bytes) {
    return HostTensor::from_bytes(type, std::move(sizes), std::move(bytes));
  }
  /// The tensor's bytes (a reference: no copy); reads a lazy tensor's bytes first (throws what
  /// HostTensor::bytes throws).
  static const std::vector<std::byte>& to_bytes(const HostTensor& tensor) { return tensor.bytes(); }
  /// HostTensor::from_source.
  static HostTensor from_source(epgraph::dtype type, std::vector<std::int64_t> sizes,
                                std::shared_ptr<const tensor_source> source) {
    return HostTensor::from_source(type, std::move(sizes), std::move(source));
  }
  /// HostTensor::source.
  static std::shared_ptr<const tensor_source> source(const HostTensor& tensor) {
    return tensor.source();
  }
};

namespace detail {

/// Whether tensor_data_traits<T> has the lazy hooks from_source and source.
template <class T, class = void>
struct has_lazy_data : std::false_type {};
template <class T>
struct has_lazy_data<
    T, std::void_t<decltype(tensor_data_traits<T>::from_source(
                       std::declval<epgraph::dtype>(), std::declval<std::vector<std::int64_t>>(),
                       std::declval<std::shared_ptr<const tensor_source>>())),
                   decltype(tensor_data_traits<T>::source(std::declval<const T&>()))>>
    : std::true_type {};

}  // namespace detail

}  // namespace epgraph::archive

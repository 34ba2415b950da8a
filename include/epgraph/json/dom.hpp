// epgraph: read, edit, validate and write torch.export exported programs from C++.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Linear-time parsing into nlohmann::ordered_json. Internal to epgraph::json.
//
// ordered_json::parse inserts every object member through ordered_map::operator[], which
// searches the members read so far for the key: an object of K members costs O(K^2), and an
// exported program's `tensor_values` has one member per graph value (a 100,000-node program
// spends almost all of its load time there). The handler below gives the same value in O(size):
// members and elements are collected on scratch stacks and each object or array is allocated
// once, at its exact size, when it closes; duplicate keys are found with one hash pass over the
// members of a large object (a short one is compared pairwise) and resolved like
// ordered_json::parse (the member stays where the key first appeared and takes the last value).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dispose.hpp"

namespace epgraph::json::detail {

using ojson = nlohmann::ordered_json;

class OrderedDomBuilder {
 public:
  OrderedDomBuilder() = default;
  OrderedDomBuilder(const OrderedDomBuilder&) = delete;
  OrderedDomBuilder& operator=(const OrderedDomBuilder&) = delete;
  // Values left by a parse abandoned by an exception are dismantled (no allocation).
  ~OrderedDomBuilder() { clear(); }

  // Every callback returns true (go on) or throws; see nlohmann's json_sax interface.
  bool null() { return value(ojson(nullptr)); }
  bool boolean(bool v) { return value(ojson(v)); }
  bool number_integer(ojson::number_integer_t v) { return value(ojson(v)); }
  bool number_unsigned(ojson::number_unsigned_t v) { return value(ojson(v)); }
  bool number_float(ojson::number_float_t v, const ojson::string_t& /*text*/) {
    return value(ojson(v));
  }
  bool string(ojson::string_t& v) { return value(ojson(v)); }
  bool binary(ojson::binary_t& v) { return value(ojson(ojson::binary_t(v))); }
  bool start_object(std::size_t /*elements*/) {
    frames_.push_back(Frame{true, values_.size(), keys_.size()});
    return true;
  }
  bool key(ojson::string_t& k) {
    keys_.push_back(k);
    return true;
  }
  bool end_object() {
    const Frame f = frames_.back();
    ojson obj(ojson::value_t::object);
    auto& members = obj.get_ref<ojson::object_t&>();
    const std::size_t n = values_.size() - f.values;
    // At most n members: reserved so that no insertion reallocates (ordered_map's members do not
    // move without throwing, so growing would copy them and destroy non-empty values; see
    // dispose.hpp).
    members.reserve(n);
    if (has_duplicates(f.keys, n)) {
      for (std::size_t i = 0; i < n; ++i) {
        members[std::move(keys_[f.keys + i])] = std::move(values_[f.values + i]);
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        members.emplace_back(std::move(keys_[f.keys + i]), std::move(values_[f.values + i]));
      }
    }
    return close(f, std::move(obj));
  }
  bool start_array(std::size_t /*elements*/) {
    frames_.push_back(Frame{false, values_.size(), keys_.size()});
    return true;
  }
  bool end_array() {
    const Frame f = frames_.back();
    ojson arr(ojson::value_t::array);
    auto& elements = arr.get_ref<ojson::array_t&>();
    const std::size_t n = values_.size() - f.values;
    elements.reserve(n);
    for (std::size_t i = 0; i < n; ++i) elements.push_back(std::move(values_[f.values + i]));
    return close(f, std::move(arr));
  }
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const Exception& ex) {
    throw ex;  // the exception ordered_json::parse throws
  }

  // The parsed value (valid once sax_parse returned true).
  ojson take() { return std::move(values_.front()); }

  // Forgets a parse (finished or abandoned by an exception), keeping the scratch space.
  void clear() noexcept {
    frames_.clear();
    for (auto& v : values_) dismantle(v);
    values_.clear();
    keys_.clear();
  }

 private:
  struct Frame {
    bool object;
    std::size_t values;  // first scratch value of this container
    std::size_t keys;    // first scratch key of this container (objects)
  };

  bool value(ojson&& v) {
    values_.push_back(std::move(v));
    return true;
  }

  bool close(const Frame& f, ojson&& container) {
    values_.resize(f.values);  // moved-from values
    keys_.resize(f.keys);
    frames_.pop_back();
    values_.push_back(std::move(container));
    return true;
  }

  bool has_duplicates(std::size_t first, std::size_t n) const {
    if (n <= 8) {
      for (std::size_t i = 1; i < n; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (keys_[first + i] == keys_[first + j]) return true;
        }
      }
      return false;
    }
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!seen.insert(keys_[first + i]).second) return true;
    }
    return false;
  }

  std::vector<Frame> frames_;
  std::vector<ojson> values_;
  std::vector<std::string> keys_;
};

// ordered_json::parse(text) in O(size of the text): the same value, the same parse_error.
inline ojson parse_ordered(std::string_view text) {
  OrderedDomBuilder builder;
  ojson::sax_parse(text.begin(), text.end(), &builder);
  return builder.take();
}

// parse_ordered(text) with a builder whose scratch space is reused (a caller parsing many small
// texts saves its allocations).
inline ojson parse_ordered(std::string_view text, OrderedDomBuilder& builder) {
  builder.clear();
  ojson::sax_parse(text.begin(), text.end(), &builder);
  ojson value = builder.take();
  builder.clear();
  return value;
}

}  // namespace epgraph::json::detail

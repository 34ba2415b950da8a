// Typed access to a parsed nlohmann::json document that names the JSON path in its errors.
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

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dispose.hpp"

namespace epgraph::json::detail {

using ojson = nlohmann::ordered_json;

// Receives, one at a time, the members of the object an OrderedDomBuilder watches (see
// OrderedDomBuilder::watch) instead of the tree.
class MemberSink {
 public:
  MemberSink() = default;
  MemberSink(const MemberSink&) = delete;
  MemberSink& operator=(const MemberSink&) = delete;
  virtual ~MemberSink() = default;
  // One completed member; `key` may be moved from, `value` is the sink's (dismantled by the
  // builder afterwards if the sink leaves anything in it).
  virtual void member(std::string& key, ojson& value) = 0;
};

// Thrown by an OrderedDomBuilder with a depth limit when arrays and objects nest deeper.
struct nesting_too_deep {};

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
  // Strings and keys are moved from: the parser passes its scratch buffer, which it clears
  // before reusing (nlohmann's SAX interface takes them by non-const reference for this).
  bool string(ojson::string_t& v) { return value(ojson(std::move(v))); }
  bool binary(ojson::binary_t& v) { return value(ojson(ojson::binary_t(v))); }
  bool start_object(std::size_t /*elements*/) { return open(true); }
  bool key(ojson::string_t& k) {
    keys_.push_back(std::move(k));
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
    const bool duplicates = has_duplicates(f.keys, n);
    // A duplicate key on the watched path: ordered_json keeps the last value, which may not be
    // the object whose members went to the sink.
    if (duplicates && f.on_path) watch_unreliable_ = true;
    if (duplicates) {
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
  bool start_array(std::size_t /*elements*/) { return open(false); }
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

  // From the next parse on, hands the members of the object at `path` (three keys below the
  // root object, e.g. graph_module.graph.tensor_values) to `sink` as they complete instead of
  // keeping them: that object is left empty in the tree. `sink` must outlive the parses.
  // watch_unreliable() tells when the tree's value at `path` may not be the object the sink saw
  // (a duplicate key on the path, or the object met twice): the caller then parses again
  // without a watch.
  void watch(const std::array<std::string_view, 3>& path, MemberSink* sink) {
    watch_path_ = path;
    sink_ = sink;
  }
  [[nodiscard]] bool watch_unreliable() const noexcept { return watch_unreliable_; }
  // Whether the watched object was met (its members, if any, went to the sink).
  [[nodiscard]] bool watched_seen() const noexcept { return watched_seen_; }
  // Whether the innermost open container is the watched object (its members go to the sink).
  // O(1).
  [[nodiscard]] bool in_watched() const noexcept {
    return !frames_.empty() && frames_.back().watched;
  }

  // Whether the innermost open container is the object holding the watched one (e.g.
  // graph_module.graph when graph_module.graph.tensor_values is watched), as far as the keys
  // read so far tell: a duplicate key on the path makes watch_unreliable() true when it closes.
  // O(1).
  [[nodiscard]] bool in_watched_parent() const noexcept {
    return sink_ != nullptr && frames_.size() == watch_path_.size() && frames_.back().on_path;
  }

  // From the next parse on, throws nesting_too_deep when arrays and objects nest deeper than
  // `depth` levels (0: no limit).
  void limit_depth(std::size_t depth) noexcept { max_depth_ = depth; }
  // The limit set by limit_depth (0: none) and the number of containers open now.
  [[nodiscard]] std::size_t depth_limit() const noexcept { return max_depth_; }
  [[nodiscard]] std::size_t depth() const noexcept { return frames_.size(); }

  // The parsed value (valid once sax_parse returned true).
  ojson take() { return std::move(values_.front()); }

  // Forgets a parse (finished or abandoned by an exception), keeping the scratch space.
  void clear() noexcept {
    frames_.clear();
    for (auto& v : values_) dismantle(v);
    values_.clear();
    keys_.clear();
    watch_unreliable_ = false;
    watched_seen_ = false;
  }

 private:
  struct Frame {
    bool object;
    bool on_path;        // an object at a prefix of the watched path
    bool watched;        // the watched object: its members go to the sink
    std::size_t values;  // first scratch value of this container
    std::size_t keys;    // first scratch key of this container (objects)
  };

  bool open(bool object) {
    const std::size_t depth = frames_.size();
    if (max_depth_ != 0 && depth >= max_depth_) throw nesting_too_deep{};
    bool on_path = false;
    if (sink_ != nullptr && object) {
      if (depth == 0) {
        on_path = true;
      } else if (depth <= watch_path_.size()) {
        const Frame& parent = frames_.back();
        on_path = parent.on_path && parent.object && keys_.size() > parent.keys &&
                  keys_.back() == watch_path_[depth - 1];
      }
    }
    const bool watched = on_path && depth == watch_path_.size();
    if (watched) {
      if (watched_seen_) watch_unreliable_ = true;
      watched_seen_ = true;
    }
    frames_.push_back(Frame{object, on_path, watched, values_.size(), keys_.size()});
    return true;
  }

  bool value(ojson&& v) {
    if (!frames_.empty() && frames_.back().watched) return give(std::move(v));
    values_.push_back(std::move(v));
    return true;
  }

  // Hands a completed member of the watched object to the sink.
  bool give(ojson&& v) {
    ojson member = std::move(v);
    JsonDisposer member_guard(member);
    sink_->member(keys_.back(), member);
    keys_.pop_back();
    return true;
  }

  bool close(const Frame& f, ojson&& container) {
    values_.resize(f.values);  // moved-from values
    keys_.resize(f.keys);
    frames_.pop_back();
    return value(std::move(container));
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

  std::array<std::string_view, 3> watch_path_{};
  MemberSink* sink_ = nullptr;
  bool watch_unreliable_ = false;
  bool watched_seen_ = false;
  std::size_t max_depth_ = 0;
  std::vector<Frame> frames_;
  std::vector<ojson> values_;
  std::vector<std::string> keys_;
};

// Follows JSON text one character at a time and tells which characters belong to a string
// literal, quotes included (the one home of that rule for the text scans below and
// check_nesting). No allocation.
class StringScanner {
 public:
  // Feeds `ch`, the character after the last one fed; returns true when it is one of a string's
  // characters or quotes. O(1).
  bool inside(char ch) noexcept {
    if (!inside_) {
      inside_ = ch == '"';
      return inside_;
    }
    if (escaped_) {
      escaped_ = false;
    } else if (ch == '\\') {
      escaped_ = true;
    } else if (ch == '"') {
      inside_ = false;
    }
    return true;
  }

 private:
  bool inside_ = false;
  bool escaped_ = false;
};

// Python's json module reads the bare tokens `Infinity`, `-Infinity` and `NaN` as floats, and
// torch <= 2.6 wrote non-finite floats that way (json.dumps with allow_nan=True); torch 2.13
// writes the strings "Infinity", "-Infinity" and "NaN", which the loader reads where a float is
// expected. Returns `text` with every bare token outside strings, in a value position (after
// `:`, `,`, `[` or at the start, and followed by whitespace, `,`, `]`, `}` or the end), turned
// into torch 2.13's string; nothing when there is none (the text is then left to the parser as
// it is). Only called after a parse failed, so well-formed files pay nothing. O(size).
inline std::optional<std::string> quote_bare_nonfinite(std::string_view text) {
  static constexpr std::array<std::string_view, 3> tokens = {"-Infinity", "Infinity", "NaN"};
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::string out;
  std::size_t copied = 0;  // text[0, copied) is in out
  StringScanner strings;
  char last = '\0';  // last non-space character outside strings ('\0': none yet)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (strings.inside(ch)) {
      last = '"';
      continue;
    }
    if (is_space(ch)) continue;
    if ((ch == '-' || ch == 'I' || ch == 'N') &&
        (last == '\0' || last == ':' || last == ',' || last == '[')) {
      for (std::string_view t : tokens) {
        if (text.compare(i, t.size(), t) != 0) continue;
        const std::size_t end = i + t.size();
        if (end < text.size() && !is_space(text[end]) && text[end] != ',' && text[end] != ']' &&
            text[end] != '}') {
          continue;
        }
        out.append(text.data() + copied, i - copied);
        out.push_back('"');
        out.append(t.data(), t.size());
        out.push_back('"');
        copied = end;
        i = end - 1;
        break;
      }
    }
    last = text[i];
  }
  if (copied == 0) return std::nullopt;
  out.append(text.data() + copied, text.size() - copied);
  return out;
}

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

// Parsing an exported-program document (nlohmann's or simdjson's parser) into the tree the
// reader walks, and the checks every JSON text of epgraph gets first.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader; the archive's configs use check_nesting and
// check_no_nul).

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../format.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "read_values.hpp"
#include "tree.hpp"
#if EPGRAPH_JSON_HAS_SIMDJSON
#include "simdjson_feed.hpp"
#endif

namespace epgraph::json::detail {

// Throws serialization_error "JSON nesting deeper than 512 levels (at byte N)" when arrays and
// objects nest deeper than max_json_depth. Brackets inside strings do not count; malformed text
// is left to the parser. O(size of the text), no allocation.
inline void check_nesting(std::string_view text) {
  std::size_t depth = 0;
  StringScanner strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (strings.inside(ch)) continue;
    if (ch == '[' || ch == '{') {
      if (++depth > max_json_depth) {
        throw serialization_error("", "JSON nesting deeper than " + std::to_string(max_json_depth) +
                                          " levels (at byte " + std::to_string(i) + ")");
      }
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
}

// Throws serialization_error "malformed JSON: NUL byte at byte N" for the first raw NUL in `text`.
// JSON text never holds one (control characters in strings must be escaped), but nlohmann's lexer
// reads it as the end of input: "{...}\0garbage" would load as "{...}" with the garbage dropped
// without a word. Every JSON entry point (program text, archive configs) calls this first, so
// both parsers refuse the same texts with the same message. O(size of the text) (one memchr), no
// allocation unless it throws.
inline void check_no_nul(std::string_view text) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw serialization_error("", "malformed JSON: NUL byte at byte " + std::to_string(nul));
  }
}

// The parser that reads a document's text into the tree the reader walks (parse_document).
enum class parser_backend {
  nlohmann,  // nlohmann's SAX parser
  simdjson,  // simdjson's DOM parser (when epgraph::json links simdjson, else nlohmann's)
};

// simdjson when epgraph::json links it (EPGRAPH_JSON_HAS_SIMDJSON), else nlohmann.
inline constexpr parser_backend default_parser_backend =
    EPGRAPH_JSON_HAS_SIMDJSON ? parser_backend::simdjson : parser_backend::nlohmann;

// A parsed exported-program document and what was read on the way. Its tree is dismantled on
// destruction: nlohmann's destructor allocates for a non-empty array or object, and an
// allocation failure there would terminate (see dispose.hpp).
struct ParsedDocument {
  ParsedDocument() = default;
  ParsedDocument(const ParsedDocument&) = delete;
  ParsedDocument& operator=(const ParsedDocument&) = delete;
  ~ParsedDocument() { dismantle(doc); }

  ojson doc;
  // graph_module.graph.tensor_values, read while parsing (see TensorValuesSink); empty when the
  // tree holds them.
  std::optional<TensorValuesSink> tensor_values;
  // The text parsed: the caller's, or (second attempt) that text with the bare non-finite floats
  // of torch <= 2.6 quoted as torch 2.13 writes them (quote_bare_nonfinite), held in `quoted`.
  std::string_view text;
  std::optional<std::string> quoted;
#if EPGRAPH_JSON_HAS_SIMDJSON
  // The parser of the text when simdjson read it (`own_feeder`, or the caller's: see
  // load_program), and graph_module.graph.nodes as its document has them (the tree then holds an
  // empty array there; see SimdjsonFeeder::feed), or nullptr when the tree holds the nodes.
  SimdjsonFeeder* feeder = nullptr;
  std::unique_ptr<SimdjsonFeeder> own_feeder;
  const simdjson::dom::array* nodes = nullptr;
#endif
};

// What a parse leaves for the next one: simdjson's parser with its buffers (the copy of the
// text, the tape, the strings), so that a second load neither allocates nor first-touches them
// (see ExportedProgramDeserializer). Empty without simdjson.
struct ParserCache {
#if EPGRAPH_JSON_HAS_SIMDJSON
  std::unique_ptr<SimdjsonFeeder> feeder;
#endif
};

// Parses `json_text` into `out` (one pass, tensor_values streamed into out.tensor_values; a
// second, plain parse when that pass cannot be trusted) with `backend` (simdjson reads only the
// texts it reads as nlohmann does and leaves the others to nlohmann, see simdjson_feed.hpp: the
// document and the errors are the same with both). Throws serialization_error "JSON nesting
// deeper than 512 levels (at byte N)", "malformed JSON: NUL byte at byte N" and "malformed JSON:
// <nlohmann's message>".
inline void parse_document(std::string_view json_text, ParsedDocument& out,
                           parser_backend backend = default_parser_backend) {
  check_no_nul(json_text);  // the same refusal for both backends
  out.text = json_text;
  for (;;) {
    out.tensor_values.emplace();
    try {
      OrderedDomBuilder builder;
      builder.limit_depth(max_json_depth);
      builder.watch({"graph_module", "graph", "tensor_values"}, &*out.tensor_values);
      bool parsed = false;
#if EPGRAPH_JSON_HAS_SIMDJSON
      out.nodes = nullptr;
      if (backend == parser_backend::simdjson) {
        if (out.feeder == nullptr) {
          out.own_feeder = std::make_unique<SimdjsonFeeder>();
          out.feeder = out.own_feeder.get();
        }
        parsed = out.feeder->feed(out.text, builder, &*out.tensor_values, true);
        if (!parsed) {  // left to nlohmann: what was fed is forgotten
          builder.clear();
          out.tensor_values.emplace();
        } else {
          out.nodes = out.feeder->nodes();
        }
      }
#else
      (void)backend;
#endif
      if (!parsed) ojson::sax_parse(out.text.begin(), out.text.end(), &builder);
      out.doc = builder.take();
#if EPGRAPH_JSON_HAS_SIMDJSON
      // The graph had `nodes` twice: the tree holds empty arrays for both.
      const bool nodes_twice = parsed && out.feeder->nodes_twice();
#else
      const bool nodes_twice = false;
#endif
      if (!builder.watched_seen() && !nodes_twice) {
        out.tensor_values.reset();  // nothing was taken from the tree
      } else if (builder.watch_unreliable() || nodes_twice || out.tensor_values->duplicates()) {
        dismantle(out.doc);
        out.doc = nullptr;
        out.tensor_values.reset();
#if EPGRAPH_JSON_HAS_SIMDJSON
        out.nodes = nullptr;
#endif
        out.doc = parse_ordered(out.text);
      }

      return;
    } catch (const nesting_too_deep&) {
      check_nesting(out.text);  // throws, naming the byte
      throw serialization_error(
          "", "JSON nesting deeper than " + std::to_string(max_json_depth) + " levels");
    } catch (const nlohmann::json::parse_error& e) {
      if (!out.quoted && (out.quoted = quote_bare_nonfinite(json_text))) {
        out.text = *out.quoted;
        continue;
      }
      throw serialization_error("", std::string("malformed JSON: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
      // out_of_range for a number too large for a double (fuzz_json).
      throw serialization_error("", std::string("malformed JSON: ") + e.what());
    }
  }
}

}  // namespace epgraph::json::detail

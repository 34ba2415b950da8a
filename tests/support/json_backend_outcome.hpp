// What loading a text through one JSON parser backend gives, as one comparable string: the tests
// and the fuzz target require both backends (one NodeReader on simdjson's document and on
// nlohmann's tree) to give the same.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <epgraph/json/detail/read_program.hpp>  // load_program: a chosen parser backend
#include <epgraph/json/json.hpp>
#include <exception>
#include <string>
#include <string_view>

namespace epgraph_test {

/// "ok:" and the saved text of the program loaded from `text` by `backend`; "save error:" and the
/// message when it loads but cannot be saved; "error:" and the message of the load's
/// serialization_error; "other:" and the message of any other std::exception.
inline std::string json_backend_outcome(std::string_view text,
                                        epgraph::json::detail::parser_backend backend) {
  try {
    const auto ep = epgraph::json::detail::load_program<epgraph::HostTensor>(text, backend);
    try {
      return "ok:" + epgraph::json::save_exported_program_to_string(ep);
    } catch (const epgraph::json::serialization_error& e) {
      return std::string("save error:") + e.what();
    }
  } catch (const epgraph::json::serialization_error& e) {
    return std::string("error:") + e.what();
  } catch (const std::exception& e) {
    return std::string("other:") + e.what();
  }
}

}  // namespace epgraph_test

// SPDX-License-Identifier: Apache-2.0
// JSON in the language: json-read, json-read-file, json-write, json-write-file (json.cpp).
#pragma once

namespace tl::eval {
class Interp;
}

namespace tl::text {

// Registers json-read, json-read-file, json-write and json-write-file.
void register_json_builtins(eval::Interp& in);

}  // namespace tl::text

// SPDX-License-Identifier: Apache-2.0
// The Catch2 runner for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// SPDX-License-Identifier: Apache-2.0
// placeholder
#include <catch2/catch.hpp>

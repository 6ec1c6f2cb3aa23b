// SPDX-License-Identifier: Apache-2.0
// The IDX reader: the header, then the data read in chunks (so memory follows the bytes the
// file holds), then a check that nothing follows it.
#include "tensor/io/idx.h"

namespace tl::tensor::io {

namespace {

// Reads exactly n bytes.
void read_exact(const FileCtx& ctx, ByteStream& f, void* out, std::size_t n, const char* what) {
  if (f.read(out, n) != n) ctx.fail(std::string("is truncated: it ends in the ") + what);
}

// Reads on past the data to the end of the file, where the gzip trailer is checked: a
// damaged .gz file (issue 19) fails here instead of loading quietly.
void expect_end(const FileCtx& ctx, ByteStream& f) {
  unsigned char rest[1];
  if (f.read(rest, 1) != 0) ctx.fail("has bytes after the data its header declares");
}

}  // namespace

Array read_idx(const FileCtx& ctx) {
  ByteStream f(ctx);
  unsigned char magic[4];
  read_exact(ctx, f, magic, 4, "header");
  if (magic[0] != 0 || magic[1] != 0) {
    ctx.fail("is not an IDX file (it does not start with two zero bytes)");
  }
  DType t;
  switch (magic[2]) {
    case 0x08: t = DType::U8; break;
    case 0x09: t = DType::I8; break;
    case 0x0B: t = DType::I16; break;
    case 0x0C: t = DType::I32; break;
    case 0x0D: t = DType::F32; break;
    case 0x0E: t = DType::F64; break;
    default: ctx.fail_dtype("has the unknown IDX element type 0x" + std::to_string(magic[2]));
  }
  const int rank = magic[3];
  if (rank == 0) ctx.fail("declares no dimensions");
  std::vector<std::int64_t> shape;
  std::uint64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    unsigned char d[4];
    read_exact(ctx, f, d, 4, "header");
    const std::uint64_t n =
        (std::uint64_t{d[0]} << 24) | (std::uint64_t{d[1]} << 16) | (std::uint64_t{d[2]} << 8) | d[3];
    shape.push_back(static_cast<std::int64_t>(n));
    if (n != 0 && count > (std::uint64_t{1} << 40) / n) ctx.fail("declares too many elements");
    count *= n;
  }
  // The data is read in chunks before the buffer is made, so memory follows the bytes the
  // file really holds, not the count its header claims (a few bytes can claim terabytes).
  const std::uint64_t want = count * dtype_size(t);
  std::string data;
  while (data.size() < want) {
    const std::size_t old = data.size();
    const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(want - old, std::uint64_t{1} << 24));
    data.resize(old + chunk);
    read_exact(ctx, f, data.data() + old, chunk, "data");
  }
  auto buf = std::make_shared<Buffer>(t, static_cast<std::size_t>(count));
  if (!data.empty()) std::memcpy(buf->bytes().data(), data.data(), data.size());
  expect_end(ctx, f);
  // Elements are big-endian.
  if (kHostIsLittleEndian) swap_byte_order(*buf);
  return Array{std::move(buf), std::move(shape)};
}

}  // namespace tl::tensor::io

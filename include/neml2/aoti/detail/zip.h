// Integrity check of a .pt2 package (a zip archive) before AOTInductor loads the library inside it.
//
// Why the library reads zip archives itself: torch's own reader (PyTorchStreamReader,
// which AOTIModelPackageLoader uses) checks no CRCs, so a package truncated or corrupted
// on a shared file system would be unpacked and its shared library dlopen'ed anyway,
// crashing the host or computing garbage. Checking every entry's CRC-32 first turns that
// into a FatalError that names the file.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace neml2::aoti::detail
{
/**
 * CRC-32 as zip archives store it (IEEE 802.3: reflected polynomial 0xEDB88320,
 * initial value and final xor all ones), eight bytes per step with eight tables
 * ("slicing by 8"): a model's packages are megabytes, checked at every load.
 */
class Crc32
{
public:
  /// Feed @p n more bytes.
  void update(const unsigned char * p, std::size_t n)
  {
    const auto & t = tables();
    std::uint32_t c = _crc;
    const auto word = [](const unsigned char * q)
    {
      return std::uint32_t(q[0]) | std::uint32_t(q[1]) << 8 | std::uint32_t(q[2]) << 16 |
             std::uint32_t(q[3]) << 24;
    };
    for (; n >= 8; n -= 8, p += 8)
    {
      const std::uint32_t lo = c ^ word(p), hi = word(p + 4);
      c = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
    }
    for (; n > 0; --n, ++p)
      c = t[0][(c ^ *p) & 0xFFu] ^ (c >> 8);
    _crc = c;
  }

  /// The checksum of everything fed so far.
  std::uint32_t value() const { return ~_crc; }

private:
  using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

  // t[0] is the byte-at-a-time table; t[k][i] is the CRC of byte i followed by k zero bytes.
  static const Tables & tables()
  {
    static const Tables t = []
    {
      Tables out{};
      for (std::uint32_t i = 0; i < 256; ++i)
      {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
          c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        out[0][i] = c;
      }
      for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t i = 0; i < 256; ++i)
          out[k][i] = out[0][out[k - 1][i] & 0xFFu] ^ (out[k - 1][i] >> 8);
      return out;
    }();
    return t;
  }

  std::uint32_t _crc = 0xFFFFFFFFu;
};

/// Random access to the bytes of a file.
class FileBytes
{
public:
  /// Open @p path; ok() says whether that worked.
  explicit FileBytes(const std::filesystem::path & path) : _in(path, std::ios::binary)
  {
    std::error_code ec;
    _size = std::filesystem::file_size(path, ec);
    _ok = bool(_in) && !ec;
  }
  /// Whether the file could be opened and sized.
  bool ok() const { return _ok; }
  /// Its size in bytes.
  std::uint64_t size() const { return _size; }
  /// Copy @p n bytes at @p offset into @p out; false past the end or on a read error.
  bool read(std::uint64_t offset, std::size_t n, unsigned char * out)
  {
    if (offset > _size || n > _size - offset)
      return false;
    _in.clear();
    _in.seekg(std::streamoff(offset));
    _in.read(reinterpret_cast<char *>(out), std::streamsize(n));
    return std::size_t(_in.gcount()) == n;
  }

private:
  std::ifstream _in;
  std::uint64_t _size = 0;
  bool _ok = false;
};

/// Random access to bytes in memory (the fuzz target's source).
class MemoryBytes
{
public:
  /// View @p n bytes at @p data; they must outlive this object.
  MemoryBytes(const unsigned char * data, std::size_t n) : _data(data), _size(n) {}
  /// Always true.
  bool ok() const { return true; }
  /// The number of bytes.
  std::uint64_t size() const { return _size; }
  /// Copy @p n bytes at @p offset into @p out; false past the end.
  bool read(std::uint64_t offset, std::size_t n, unsigned char * out) const
  {
    if (offset > _size || n > _size - offset)
      return false;
    for (std::size_t i = 0; i < n; ++i)
      out[i] = _data[offset + i];
    return true;
  }

private:
  const unsigned char * _data;
  std::uint64_t _size;
};

/**
 * Why the zip archive in @p src is damaged, or "" when every stored entry
 * matches its CRC-32.
 *
 * AOTInductor's loader extracts a .pt2 without checking the checksums and then
 * loads the shared library inside it, so a flipped byte in its code section
 * crashes the host in the middle of a call instead of failing the load. Every
 * offset and size read from the archive is bounds-checked here: hostile input
 * gives a message, never an out-of-range read. Compressed entries (which
 * neml2-compile never writes) are not inflated, so their checksum is not checked.
 */
template <class Source>
std::string
zip_damage(Source & src)
{
  const std::uint64_t n = src.size();
  const auto u16 = [](const unsigned char * p)
  { return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8; };
  const auto u32 = [&](const unsigned char * p) { return u16(p) | u16(p + 2) << 16; };
  const auto u64 = [&](const unsigned char * p)
  { return std::uint64_t(u32(p)) | std::uint64_t(u32(p + 4)) << 32; };
  const auto hex = [](std::uint32_t v)
  {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", unsigned(v));
    return std::string(buf);
  };

  // The end-of-central-directory record: 22 bytes plus a comment that runs to the end of
  // the file. A truncated file has none where it should be.
  constexpr std::uint64_t eocd_size = 22, max_comment = 0xFFFF;
  if (n < eocd_size)
    return "not a zip archive (" + std::to_string(n) + " bytes)";
  const std::uint64_t tail_len = std::min<std::uint64_t>(n, eocd_size + max_comment);
  std::vector<unsigned char> tail(tail_len);
  if (!src.read(n - tail_len, tail_len, tail.data()))
    return "cannot read the end of the file";
  std::uint64_t eocd = n; // absolute offset of the record, n while not found
  for (std::uint64_t p = tail_len - eocd_size + 1; p-- > 0;)
    if (u32(&tail[p]) == 0x06054b50u && p + eocd_size + u16(&tail[p + 20]) == tail_len)
    {
      eocd = n - tail_len + p;
      break;
    }
  if (eocd == n)
    return "no end-of-central-directory record: the file is truncated or not a zip archive";
  const unsigned char * e = &tail[eocd - (n - tail_len)];
  if (u16(e + 4) != 0 || u16(e + 6) != 0)
    return "a multi-disk archive";
  std::uint64_t entries = u16(e + 10), cd_size = u32(e + 12), cd_offset = u32(e + 16);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu)
  {
    // Zip64: a locator just before the record points at the 64-bit record.
    unsigned char loc[20], rec[56];
    if (eocd < 20 || !src.read(eocd - 20, 20, loc) || u32(loc) != 0x07064b50u ||
        !src.read(u64(loc + 8), 56, rec) || u32(rec) != 0x06064b50u)
      return "the zip64 end-of-central-directory record is missing or damaged";
    entries = u64(rec + 32);
    cd_size = u64(rec + 40);
    cd_offset = u64(rec + 48);
  }
  if (cd_offset > eocd || cd_size > eocd - cd_offset)
    return "the central directory lies outside the file";
  if (entries == 0)
    return "the archive holds no files";
  std::vector<unsigned char> cd(cd_size);
  if (!src.read(cd_offset, cd_size, cd.data()))
    return "cannot read the central directory";

  constexpr std::size_t header = 46;
  std::vector<unsigned char> block(std::size_t(1) << 16);
  std::size_t pos = 0;
  for (std::uint64_t i = 0; i < entries; ++i)
  {
    if (cd.size() - pos < header || u32(&cd[pos]) != 0x02014b50u)
      return "central directory entry " + std::to_string(i) + " is damaged";
    const unsigned char * h = &cd[pos];
    const std::uint32_t flags = u16(h + 8), method = u16(h + 10), crc = u32(h + 16);
    std::uint64_t csize = u32(h + 20), usize = u32(h + 24), local = u32(h + 42);
    const std::size_t name_len = u16(h + 28), extra_len = u16(h + 30), comment_len = u16(h + 32);
    if (cd.size() - pos - header < name_len + extra_len + comment_len)
      return "central directory entry " + std::to_string(i) + " is damaged";
    const std::string name(reinterpret_cast<const char *>(h + header), name_len);
    // Zip64 extra field (id 1): the 64-bit values of the fields that hold all ones, in order.
    const unsigned char * x = h + header + name_len;
    for (std::size_t k = 0; k + 4 <= extra_len;)
    {
      const std::size_t id = u16(x + k), len = u16(x + k + 2);
      if (k + 4 + len > extra_len)
        return "entry '" + name + "' has a damaged extra field";
      if (id == 1)
      {
        std::size_t q = k + 4;
        for (std::uint64_t * v : {&usize, &csize, &local})
          if (*v == 0xFFFFFFFFu)
          {
            if (q + 8 > k + 4 + len)
              return "entry '" + name + "' has a damaged zip64 field";
            *v = u64(x + q);
            q += 8;
          }
      }
      k += 4 + len;
    }
    pos += header + name_len + extra_len + comment_len;
    if ((flags & 1u) || method != 0)
      continue; // encrypted or compressed: not written by neml2-compile, left to the loader
    if (csize != usize)
      return "entry '" + name + "' is stored with two different sizes";
    unsigned char lh[30];
    if (!src.read(local, 30, lh) || u32(lh) != 0x04034b50u)
      return "the local header of entry '" + name + "' is damaged";
    const std::uint64_t data = local + 30 + u16(lh + 26) + u16(lh + 28);
    if (data > cd_offset || csize > cd_offset - data)
      return "entry '" + name + "' runs past the file's data";
    Crc32 sum;
    for (std::uint64_t done = 0; done < csize;)
    {
      const std::size_t len = std::size_t(std::min<std::uint64_t>(block.size(), csize - done));
      if (!src.read(data + done, len, block.data()))
        return "cannot read entry '" + name + "'";
      sum.update(block.data(), len);
      done += len;
    }
    if (sum.value() != crc)
      return "entry '" + name + "' fails its CRC-32 check (stored " + hex(crc) + ", computed " +
             hex(sum.value()) + ")";
  }
  return "";
}
} // namespace neml2::aoti::detail

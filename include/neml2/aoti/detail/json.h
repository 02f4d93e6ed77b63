// A small strict JSON reader for model_meta.json (RFC 8259, no extensions).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace neml2::aoti::detail
{
/// A parsed JSON value; objects keep their key order.
struct Json
{
  /// The JSON type of a value.
  enum class Kind
  {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object
  };

  Kind kind = Kind::Null;                           ///< which of the members below is set
  bool boolean = false;                             ///< value of a Bool
  double number = 0;                                ///< value of a Number
  std::string string;                               ///< value of a String
  std::vector<Json> array;                          ///< elements of an Array
  std::vector<std::pair<std::string, Json>> object; ///< members of an Object, in order

  /// The member @p key of an Object, or nullptr.
  const Json * find(const std::string & key) const
  {
    for (const auto & [k, v] : object)
      if (k == key)
        return &v;
    return nullptr;
  }

  /// A short name of the kind, for error messages.
  const char * kind_name() const
  {
    switch (kind)
    {
      case Kind::Null:
        return "null";
      case Kind::Bool:
        return "a boolean";
      case Kind::Number:
        return "a number";
      case Kind::String:
        return "a string";
      case Kind::Array:
        return "an array";
      case Kind::Object:
        return "an object";
    }
    return "?";
  }
};

/// A syntax error, with the 1-based line and column where it was found.
struct JsonSyntaxError : std::runtime_error
{
  /// Construct from a message and position.
  JsonSyntaxError(const std::string & what, std::size_t line_, std::size_t column_)
    : std::runtime_error(what),
      line(line_),
      column(column_)
  {
  }
  std::size_t line;   ///< 1-based line
  std::size_t column; ///< 1-based column
};

/// Recursive-descent parser over one string; nesting is bounded so hostile input cannot
/// exhaust the stack.
class JsonParser
{
public:
  /// Parse all of @p text as one JSON value.
  static Json parse(const std::string & text)
  {
    JsonParser p(text);
    p.skip_space();
    Json v = p.value(0);
    p.skip_space();
    if (p._pos != text.size())
      p.fail("unexpected text after the JSON value");
    return v;
  }

private:
  static constexpr int max_depth = 64;

  explicit JsonParser(const std::string & text) : _s(text) {}

  [[noreturn]] void fail(const std::string & what) const
  {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < _pos && i < _s.size(); ++i)
    {
      if (_s[i] == '\n')
      {
        ++line;
        col = 1;
      }
      else
        ++col;
    }
    throw JsonSyntaxError(what, line, col);
  }

  bool at_end() const { return _pos >= _s.size(); }
  char peek() const { return at_end() ? '\0' : _s[_pos]; }

  void skip_space()
  {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++_pos;
  }

  void expect(char c)
  {
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++_pos;
  }

  void literal(const char * word)
  {
    for (const char * w = word; *w; ++w, ++_pos)
      if (peek() != *w)
        fail(std::string("invalid literal, expected '") + word + "'");
  }

  Json value(int depth)
  {
    if (depth > max_depth)
      fail("nesting deeper than " + std::to_string(max_depth));
    Json v;
    switch (peek())
    {
      case '{':
        v.kind = Json::Kind::Object;
        parse_object(v, depth);
        break;
      case '[':
        v.kind = Json::Kind::Array;
        parse_array(v, depth);
        break;
      case '"':
        v.kind = Json::Kind::String;
        v.string = parse_string();
        break;
      case 't':
        literal("true");
        v.kind = Json::Kind::Bool;
        v.boolean = true;
        break;
      case 'f':
        literal("false");
        v.kind = Json::Kind::Bool;
        break;
      case 'n':
        literal("null");
        break;
      default:
        v.kind = Json::Kind::Number;
        v.number = parse_number();
    }
    return v;
  }

  void parse_object(Json & v, int depth)
  {
    expect('{');
    skip_space();
    if (peek() == '}')
    {
      ++_pos;
      return;
    }
    while (true)
    {
      skip_space();
      if (peek() != '"')
        fail("expected a string key");
      std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      v.object.emplace_back(std::move(key), value(depth + 1));
      skip_space();
      if (peek() == ',')
      {
        ++_pos;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Json & v, int depth)
  {
    expect('[');
    skip_space();
    if (peek() == ']')
    {
      ++_pos;
      return;
    }
    while (true)
    {
      skip_space();
      v.array.push_back(value(depth + 1));
      skip_space();
      if (peek() == ',')
      {
        ++_pos;
        continue;
      }
      expect(']');
      return;
    }
  }

  unsigned hex4()
  {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i, ++_pos)
    {
      const char c = peek();
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= unsigned(c - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return code;
  }

  static void append_utf8(std::string & out, unsigned cp)
  {
    if (cp < 0x80)
      out += char(cp);
    else if (cp < 0x800)
    {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000)
    {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
    else
    {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string()
  {
    expect('"');
    std::string out;
    while (true)
    {
      if (at_end())
        fail("unterminated string");
      const char c = _s[_pos++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character in string");
      if (c != '\\')
      {
        out += c;
        continue;
      }
      const char e = peek();
      ++_pos;
      switch (e)
      {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
        {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00)
          {
            if (peek() != '\\' || _pos + 1 >= _s.size() || _s[_pos + 1] != 'u')
              fail("unpaired surrogate in \\u escape");
            _pos += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000)
              fail("invalid low surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          else if (cp >= 0xDC00 && cp < 0xE000)
            fail("unpaired surrogate in \\u escape");
          append_utf8(out, cp);
          break;
        }
        default:
          --_pos;
          fail("invalid escape in string");
      }
    }
  }

  double parse_number()
  {
    const std::size_t start = _pos;
    auto digits = [&]
    {
      const std::size_t d0 = _pos;
      while (peek() >= '0' && peek() <= '9')
        ++_pos;
      return _pos - d0;
    };
    if (peek() == '-')
      ++_pos;
    if (peek() == '0')
      ++_pos;
    else if (digits() == 0)
      fail("expected a value");
    if (peek() == '.')
    {
      ++_pos;
      if (digits() == 0)
        fail("expected digits after '.'");
    }
    if (peek() == 'e' || peek() == 'E')
    {
      ++_pos;
      if (peek() == '+' || peek() == '-')
        ++_pos;
      if (digits() == 0)
        fail("expected digits in exponent");
    }
    const std::string token = _s.substr(start, _pos - start);
    return std::strtod(token.c_str(), nullptr);
  }

  const std::string & _s;
  std::size_t _pos = 0;
};
} // namespace neml2::aoti::detail

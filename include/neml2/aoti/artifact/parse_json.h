// Reading JSON with nlohmann/json: the document type, its kinds by name, and a parse whose
// errors are one-line FatalErrors with file, line and column. Numbers are read the same
// under every C locale, which is why the library does not parse JSON itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti::detail
{
/// A JSON document; members keep the order of the file, so messages name the first bad one.
using Json = nlohmann::ordered_json;

/// The JSON kinds a model_meta.json field can be required to have.
enum class JsonKind
{
  null,
  boolean,
  number,
  string,
  array,
  object
};

/// The kind of @p v (every number kind is a number).
inline JsonKind
kind_of(const Json & v)
{
  if (v.is_boolean())
    return JsonKind::boolean;
  if (v.is_number())
    return JsonKind::number;
  if (v.is_string())
    return JsonKind::string;
  if (v.is_array())
    return JsonKind::array;
  if (v.is_object())
    return JsonKind::object;
  return JsonKind::null;
}

/// A short name of @p k, for messages.
inline const char *
kind_name(JsonKind k)
{
  switch (k)
  {
    case JsonKind::null:
      break;
    case JsonKind::boolean:
      return "a boolean";
    case JsonKind::number:
      return "a number";
    case JsonKind::string:
      return "a string";
    case JsonKind::array:
      return "an array";
    case JsonKind::object:
      return "an object";
  }
  return "null";
}

/**
 * Parse @p text, the contents of @p file, as strict JSON (RFC 8259, no comments).
 * Numbers are read the same under every C locale (a host that sets a comma-decimal
 * locale reads 0.3 as 0.3). A syntax error is a FatalError `file:line:column: malformed
 * JSON: ...`, the position counted from the parser's byte offset.
 */
inline Json
parse_json(const std::string & text, const std::string & file)
{
  try
  {
    return Json::parse(text);
  }
  catch (const Json::parse_error & e)
  {
    // e.byte is 1-based, one past the character that failed.
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i)
    {
      if (text[i] == '\n')
      {
        ++line;
        column = 1;
      }
      else
        ++column;
    }
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 4: <why>";
    // keep <why>, the position is ours.
    std::string why = e.what();
    if (const auto colon = why.find(": "); colon != std::string::npos)
      why = why.substr(colon + 2);
    throw FatalError(file + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": malformed JSON: " + why);
  }
  catch (const Json::exception & e)
  {
    // A number too large for a double (1e400): nlohmann/json refuses it as out of range.
    std::string why = e.what();
    if (const auto close = why.find("] "); close != std::string::npos)
      why = why.substr(close + 2);
    throw FatalError(file + ": malformed JSON: " + why);
  }
}

} // namespace neml2::aoti::detail

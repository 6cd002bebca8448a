// SPDX-License-Identifier: MIT
#pragma once

#include "kineto/boundedjsoninput.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// One scalar JSON value as a SAX parser delivers it.
struct JsonValue
{
    enum class Type : uint8_t
    {
        Null,
        Boolean,
        Integer,
        Unsigned,
        Float,
        String
    };
    Type type = Type::Null;
    bool boolean = false;
    int64_t integer = 0;
    uint64_t unsignedInteger = 0;
    double number = 0;
    std::string text; ///< strings; for floats, the literal as written

    bool isString() const
    {
        return type == Type::String;
    }
    /// Any number that is an integer in int64 range (a float too, when integral: 1.0 or 1e3).
    bool asInteger(int64_t& out) const;
    /// Any number.
    bool asNumber(double& out) const;
    /// "a string (\"abc\")", "the number 1e999", "null", ... for messages (input text escaped).
    std::string describe() const;
};

/// The part of a SAX consumer every bounded reader shares: depth limit, the current key of each open object,
/// errors with the input's line and column, and nlohmann's own parse errors and the input's stop reasons turned
/// into one message. Subclasses see scalar values, starts and ends.
class JsonSaxBase
{
public:
    using json = nlohmann::json;

    JsonSaxBase(BoundedJsonInput& input, int maxDepth)
        : m_input(input)
        , m_maxDepth(maxDepth)
    {
    }
    virtual ~JsonSaxBase() = default;

    /// Parses the whole input; "" on success, else "line:col: message".
    std::string run();

    // nlohmann::json SAX interface.
    bool null();
    bool boolean(bool value);
    bool number_integer(json::number_integer_t value);
    bool number_unsigned(json::number_unsigned_t value);
    bool number_float(json::number_float_t value, const json::string_t& literal);
    bool string(json::string_t& value);
    bool binary(json::binary_t& value);
    bool start_object(std::size_t elements);
    bool key(json::string_t& value);
    bool end_object();
    bool start_array(std::size_t elements);
    bool end_array();
    bool parse_error(std::size_t position, const std::string& lastToken, const nlohmann::detail::exception& ex);

protected:
    virtual bool onValue(const JsonValue& value) = 0;
    virtual bool onStart(bool isArray) = 0;
    virtual bool onEnd(bool isArray) = 0;

    /// Stops the parse with `message` at the current position; returns false for `return fail(...)`.
    bool fail(const std::string& message);
    /// The key of the innermost open object ("" inside an array).
    const std::string& key() const
    {
        return m_keys.empty() ? m_noKey : m_keys.back();
    }
    BoundedJsonInput& input()
    {
        return m_input;
    }

private:
    bool value(JsonValue& v);
    bool start(bool isArray);

    BoundedJsonInput& m_input;
    int m_maxDepth;
    std::vector<std::string> m_keys; ///< one per open container ("" for arrays)
    std::string m_noKey;
    std::string m_error;
    JsonValue m_scratch;
};

} // namespace stagecraft

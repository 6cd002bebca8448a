// SPDX-License-Identifier: MIT
#include "kineto/jsonsaxbase.h"

#include "kineto/messagequote.h"

#include <cmath>

namespace stagecraft {

bool JsonValue::asInteger(int64_t& out) const
{
    switch (type) {
    case Type::Integer:
        out = integer;
        return true;
    case Type::Unsigned:
        if (unsignedInteger > uint64_t(INT64_MAX))
            return false;
        out = int64_t(unsignedInteger);
        return true;
    case Type::Float:
        if (!std::isfinite(number) || number != std::floor(number) || std::fabs(number) > 9.0e18)
            return false;
        out = int64_t(number);
        return true;
    default:
        return false;
    }
}

bool JsonValue::asNumber(double& out) const
{
    switch (type) {
    case Type::Integer:
        out = double(integer);
        return true;
    case Type::Unsigned:
        out = double(unsignedInteger);
        return true;
    case Type::Float:
        out = number;
        return true;
    default:
        return false;
    }
}

std::string JsonValue::describe() const
{
    switch (type) {
    case Type::Null:
        return "null";
    case Type::Boolean:
        return boolean ? "true" : "false";
    case Type::Integer:
        return "the number " + std::to_string(integer);
    case Type::Unsigned:
        return "the number " + std::to_string(unsignedInteger);
    case Type::Float:
        return "the number " + quoteForMessage(text, 40);
    case Type::String:
        return "a string (\"" + quoteForMessage(text, 60) + "\")";
    }
    return "a value";
}

std::string JsonSaxBase::run()
{
    std::istream stream(&m_input);
    try {
        json::sax_parse(stream, this, json::input_format_t::json, true, false);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        // sax_parse reports through parse_error(); this is a safety net for anything else it may throw.
        // (out_of_range.406 "number overflow parsing '1e999'" comes this way.)
        std::string what = e.what();
        if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
            what = what.substr(what.find("] ") + 2);
        if (m_error.empty())
            m_error = m_input.where() + ": invalid JSON: " + quoteForMessage(what, 200);
    }
    if (m_error.empty() && !m_input.stopReason().empty())
        m_error = m_input.where() + ": " + m_input.stopReason();
    return m_error;
}

bool JsonSaxBase::fail(const std::string& message)
{
    if (m_error.empty())
        m_error = m_input.where() + ": " + message;
    return false;
}

bool JsonSaxBase::value(JsonValue& v)
{
    m_input.tokenDone();
    if (!m_error.empty())
        return false;
    return onValue(v);
}

bool JsonSaxBase::null()
{
    m_scratch.type = JsonValue::Type::Null;
    return value(m_scratch);
}

bool JsonSaxBase::boolean(bool b)
{
    m_scratch.type = JsonValue::Type::Boolean;
    m_scratch.boolean = b;
    return value(m_scratch);
}

bool JsonSaxBase::number_integer(json::number_integer_t x)
{
    m_scratch.type = JsonValue::Type::Integer;
    m_scratch.integer = x;
    return value(m_scratch);
}

bool JsonSaxBase::number_unsigned(json::number_unsigned_t x)
{
    m_scratch.type = JsonValue::Type::Unsigned;
    m_scratch.unsignedInteger = x;
    return value(m_scratch);
}

bool JsonSaxBase::number_float(json::number_float_t x, const json::string_t& literal)
{
    m_scratch.type = JsonValue::Type::Float;
    m_scratch.number = x;
    m_scratch.text = literal.substr(0, 64);
    return value(m_scratch);
}

bool JsonSaxBase::string(json::string_t& s)
{
    m_scratch.type = JsonValue::Type::String;
    m_scratch.text.swap(s);
    return value(m_scratch);
}

bool JsonSaxBase::binary(json::binary_t&)
{
    return fail("unexpected binary value");
}

bool JsonSaxBase::start(bool isArray)
{
    m_input.tokenDone();
    if (!m_error.empty())
        return false;
    if (int(m_keys.size()) >= m_maxDepth)
        return fail("arrays and objects nested deeper than " + std::to_string(m_maxDepth) + " levels");
    if (!onStart(isArray))
        return false;
    m_keys.emplace_back();
    return true;
}

bool JsonSaxBase::start_object(std::size_t)
{
    return start(false);
}

bool JsonSaxBase::start_array(std::size_t)
{
    return start(true);
}

bool JsonSaxBase::key(json::string_t& k)
{
    m_input.tokenDone();
    if (!m_keys.empty())
        m_keys.back().swap(k);
    return m_error.empty();
}

bool JsonSaxBase::end_object()
{
    m_input.tokenDone();
    if (!m_error.empty())
        return false;
    if (!m_keys.empty())
        m_keys.pop_back();
    return onEnd(false);
}

bool JsonSaxBase::end_array()
{
    m_input.tokenDone();
    if (!m_error.empty())
        return false;
    if (!m_keys.empty())
        m_keys.pop_back();
    return onEnd(true);
}

bool JsonSaxBase::parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex)
{
    if (!m_error.empty())
        return false;
    if (!m_input.stopReason().empty()) {
        m_error = m_input.where() + ": " + m_input.stopReason();
        return false;
    }
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line L, column C: syntax error while
    // parsing value - invalid literal; last read: '...'" or "[json.exception.out_of_range.406] number overflow
    // parsing '1e999'". Keep the reason; the position is ours.
    std::string what = ex.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
        what = what.substr(what.find("] ") + 2);
    if (what.rfind("parse error", 0) == 0 && what.find(": ") != std::string::npos)
        what = what.substr(what.find(": ") + 2);
    m_error = m_input.where() + ": invalid JSON: " + quoteForMessage(what, 200);
    return false;
}

} // namespace stagecraft

#include "cli/args.hpp"

#include <algorithm>

namespace ferry::cli {

bool parsed_args::has(std::string_view long_name) const {
  return options_.find(long_name) != options_.end();
}

std::optional<std::string> parsed_args::value(std::string_view long_name) const {
  auto it = options_.find(long_name);
  if (it == options_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> parsed_args::values(std::string_view long_name) const {
  auto it = options_.find(long_name);
  if (it == options_.end()) return {};
  return it->second;
}

namespace {

const option_spec* find_long(std::span<const option_spec> specs, std::string_view name) {
  auto it = std::find_if(specs.begin(), specs.end(),
                         [&](const option_spec& s) { return s.long_name == name; });
  return it == specs.end() ? nullptr : &*it;
}

const option_spec* find_short(std::span<const option_spec> specs, char name) {
  auto it = std::find_if(specs.begin(), specs.end(), [&](const option_spec& s) {
    return s.short_name != 0 && s.short_name == name;
  });
  return it == specs.end() ? nullptr : &*it;
}

std::string display_name(const option_spec& spec) { return "--" + std::string(spec.long_name); }

}  // namespace

outcome<parsed_args> parse_args(std::span<const std::string> args,
                                std::span<const option_spec> specs, positionals policy) {
  parsed_args result;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    // A lone "-" conventionally names stdin: it is an operand, not an option.
    if (arg.size() < 2 || arg[0] != '-') {
      if (policy == positionals::forbidden) return failure("unexpected argument '" + arg + "'");
      break;
    }

    const option_spec* spec = nullptr;
    std::optional<std::string> inline_value;
    if (arg[1] == '-') {
      std::string_view body = std::string_view(arg).substr(2);
      auto eq = body.find('=');
      if (eq != std::string_view::npos) {
        inline_value = std::string(body.substr(eq + 1));
        body = body.substr(0, eq);
      }
      spec = find_long(specs, body);
    } else if (arg.size() == 2) {
      spec = find_short(specs, arg[1]);
    }
    if (spec == nullptr) return failure("unknown option '" + arg + "'");

    std::vector<std::string>& slot = result.options_[std::string(spec->long_name)];
    if (spec->kind == option_kind::flag) {
      if (inline_value) return failure("option " + display_name(*spec) + " takes no value");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        return failure("option " + display_name(*spec) + " needs a value (" +
                       std::string(spec->value_name) + ")");
      }
      inline_value = args[++i];
    }
    if (spec->kind == option_kind::value) slot.clear();
    slot.push_back(std::move(*inline_value));
  }

  if (i < args.size() && policy == positionals::forbidden) {
    return failure("unexpected argument '" + args[i] + "'");
  }
  result.positional.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return result;
}

std::string format_options(std::span<const option_spec> specs) {
  std::vector<std::string> left;
  std::size_t width = 0;
  for (const option_spec& spec : specs) {
    std::string text = spec.short_name != 0 ? std::string("-") + spec.short_name + ", " : "    ";
    text += display_name(spec);
    if (spec.kind != option_kind::flag) text += " " + std::string(spec.value_name);
    width = std::max(width, text.size());
    left.push_back(std::move(text));
  }
  std::string out;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    out += "  " + left[k] + std::string(width - left[k].size() + 2, ' ');
    out += specs[k].help;
    out += '\n';
  }
  return out;
}

}  // namespace ferry::cli

#include "cli/prices.h"

#include <cstdlib>

namespace yirage::cli {

void add_price_option(CLI::App& app, double* price) {
  app.add_option("--price-per-hour", *price,
                 "USD per device-hour for every node group (overrides the cluster's and the "
                 "devices' prices)")
      ->type_name("USD")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            double v = std::strtod(text.c_str(), nullptr);
            return v > 0 && v <= 1e6 ? std::string{}
                                     : "a price per device-hour in USD, above 0 and at most "
                                       "1000000, got '" +
                                           text + "'";
          },
          "USD"));
}

std::string apply_prices(double price_per_hour,
                         devices::ClusterSpec& cluster,
                         const devices::TaskSpec& task) {
  if (price_per_hour > 0) {
    for (devices::NodeGroup& g : cluster.groups)
      g.price = devices::UsdPerHour{price_per_hour};
  }
  bool cost = task.objective.minimize == devices::Minimize::kCost;
  if ((!cost && !task.objective.max_cost_per_hour) || cluster.usd_per_hour())
    return {};
  std::string missing;
  for (const devices::NodeGroup& g : cluster.groups) {
    if (!cluster.price_per_hour(g))
      missing += (missing.empty() ? "" : ", ") + g.name + " (" + g.device + ")";
  }
  return (cost ? task.minimize_loc.str() : task.max_cost_loc.str()) + ": error: '" +
         (cost ? "minimize: cost" : "max_cost_per_hour") +
         "' needs a price per device-hour, and these node groups of " + cluster.loc.file +
         " have none: " + missing +
         ". Add `price: 2.50 USD/h` to each of them, `price: {per_hour: 2.50 USD/h}` to the "
         "device's file, or pass --price-per-hour";
}

}  // namespace yirage::cli

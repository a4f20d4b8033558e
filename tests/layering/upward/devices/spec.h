// Fixture for the layering test: a lower library (devices) including a higher one.
#pragma once
#include "planner/search.h"

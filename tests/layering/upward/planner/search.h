// Fixture for the layering test: the planner including devices is allowed.
#pragma once
#include "devices/spec.h"

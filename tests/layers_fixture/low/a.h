// Fixture for the layering check: a low layer including a higher one.
#include "high/b.h"

// Fixture for the layering check: a higher layer including a lower one (allowed).
#include "low/a.h"

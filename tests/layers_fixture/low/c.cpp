// Fixture for the layering check: a folder that is not a layer.
#include "nowhere/x.h"

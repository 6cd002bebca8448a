// SPDX-License-Identifier: MIT
// placeholder: replaced when the area lands

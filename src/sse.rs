//! SSE stream scanner (being written).

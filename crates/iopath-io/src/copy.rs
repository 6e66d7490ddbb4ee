//! File copy by each copy method (being written).

//! Exporters: the terminal table and the JSON document.

pub mod json;
pub mod table;

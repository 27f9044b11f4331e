//! The JSON the binary prints: named series holding one value per repeat.

use serde_json::{json, Map, Value};

/// Series of per-repeat values, plus the settings they were measured with.
#[derive(Debug, Default)]
pub struct Report {
    config: Map<String, Value>,
    series: Map<String, Value>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a setting (sizes, counts) next to the figures.
    pub fn config(&mut self, name: &str, value: impl Into<Value>) {
        self.config.insert(name.to_owned(), value.into());
    }

    /// Appends one repeat's value to the series `name`, measured in `unit`.
    pub fn push(&mut self, name: &str, unit: &str, value: f64) {
        let entry = self
            .series
            .entry(name.to_owned())
            .or_insert_with(|| json!({"unit": unit, "repeats": []}));
        if let Some(Value::Array(repeats)) = entry.get_mut("repeats") {
            repeats.push(json!(value));
        }
    }

    /// The report as one JSON object.
    pub fn into_json(self) -> Value {
        json!({"config": self.config, "series": self.series})
    }
}

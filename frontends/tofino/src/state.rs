//! The congestion state an export is rendered for (`--state SAMPLES.json`):
//! queue samples applied in order, then the ports that are down. The field
//! names are those of the `lcmp explain` scenario (`samples`, `down`).
//!
//! ```json
//! { "samples": [ { "t_us": 1000, "port": 3, "queue_bytes": 4500000000 } ],
//!   "down": [5] }
//! ```

use lcmp_decide::PortId;

use crate::error::Error;
use crate::model::Agent;

/// One queue sample: the `lcmp explain` scenario's own type (one JSON
/// shape, one type), its time converted with the tables' tick rate
/// ([`lcmp_tables::time::instant`]).
pub use lcmp_tables::scenario::ScenarioSample as Sample;

/// Samples and down ports.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionState {
    /// Queue samples, applied in order.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// Ports that are down.
    #[serde(default)]
    pub down: Vec<u8>,
}

impl CongestionState {
    /// Parses the JSON form.
    ///
    /// ```
    /// let s = lcmp_tofino::CongestionState::from_json(r#"{"down":[2]}"#).unwrap();
    /// assert_eq!(s.down, [2]);
    /// assert!(lcmp_tofino::CongestionState::from_json("{").is_err());
    /// ```
    pub fn from_json(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text).map_err(Error::State)
    }

    /// Feeds the samples, then the down ports, into `agent`.
    pub fn apply(&self, agent: &mut Agent) -> Result<(), Error> {
        for s in &self.samples {
            let now = lcmp_tables::time::instant(&agent.tables().params, s.t_us);
            agent.sample(now, PortId(s.port), s.queue_bytes)?;
        }
        for &p in &self.down {
            agent.set_port_up(PortId(p), false)?;
        }
        Ok(())
    }
}

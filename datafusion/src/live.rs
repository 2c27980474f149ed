//! [`Live`]: a provider's source as it is now, opened again after each change SQL makes.

use std::sync::{Arc, RwLock};

use datafusion::common::Result;

use crate::prune::Zones;
use crate::source::{Opened, Shared, Source};

/// The source as it is now, with the zone maps computed on it: opened again after every
/// change this provider makes.
#[derive(Debug)]
pub(crate) struct Live {
    source: Source,
    current: RwLock<(Shared, Arc<Zones>)>,
}

impl Live {
    pub(crate) fn new(source: Source, opened: Shared) -> Live {
        Live {
            source,
            current: RwLock::new((opened, Arc::new(Zones::default()))),
        }
    }

    pub(crate) fn current(&self) -> (Shared, Arc<Zones>) {
        let c = self.current.read().unwrap_or_else(|e| e.into_inner());
        (c.0.clone(), c.1.clone())
    }

    /// Open the source again (after a change), zone maps forgotten.
    pub(crate) fn reload(&self) -> Result<()> {
        let opened: Shared = Arc::new(self.source.open()?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) =
            (opened, Arc::new(Zones::default()));
        Ok(())
    }

    /// The names of the table's generated (materialized) columns.
    pub(crate) fn generated_columns(&self) -> Vec<String> {
        match &*self.current().0 {
            Opened::Table(t, _) => t.generated_columns(),
            Opened::Array(_) => Vec::new(),
        }
    }

    /// The names of the table's computed columns.
    pub(crate) fn computed_columns(&self) -> Vec<String> {
        match &*self.current().0 {
            Opened::Table(t, _) => t
                .columns()
                .iter()
                .filter(|c| c.computed().is_some())
                .map(|c| c.name().to_string())
                .collect(),
            Opened::Array(_) => Vec::new(),
        }
    }
}

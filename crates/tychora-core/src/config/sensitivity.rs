//! `[sensitivity]`: the levels a captured source is labelled with, lowest first, and the
//! deployment's ceiling. Content above the ceiling is never captured (so it can reach no lexical
//! statistic and no vector neighbourhood); a query may ask for content up to a lower level, and
//! eligibility keeps to it in every channel before ranking.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[sensitivity]` in `workspace.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sensitivity {
    /// The levels, lowest first.
    #[serde(default = "default_levels")]
    pub levels: Vec<String>,
    /// What a source captured without `--sensitivity` is labelled.
    #[serde(default = "default_level")]
    pub default: String,
    /// The highest level this workspace captures.
    #[serde(default = "default_ceiling")]
    pub ceiling: String,
}

fn default_levels() -> Vec<String> {
    ["public", "internal", "confidential", "secret"]
        .map(String::from)
        .to_vec()
}

fn default_level() -> String {
    "internal".into()
}

fn default_ceiling() -> String {
    "confidential".into()
}

impl Default for Sensitivity {
    fn default() -> Self {
        Self {
            levels: default_levels(),
            default: default_level(),
            ceiling: default_ceiling(),
        }
    }
}

impl Sensitivity {
    /// The level's place, lowest first.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` naming the levels, for one that is not among them.
    pub fn rank(&self, level: &str) -> Result<usize> {
        self.levels.iter().position(|l| l == level).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "sensitivity {level:?} is not one of this workspace's levels ({}; [sensitivity] in workspace.toml)",
                self.levels.join(", ")
            ))
        })
    }

    /// Whether `level` is at or below the ceiling.
    ///
    /// # Errors
    /// As [`Self::rank`].
    pub fn within_ceiling(&self, level: &str) -> Result<bool> {
        Ok(self.rank(level)? <= self.ceiling_rank())
    }

    fn ceiling_rank(&self) -> usize {
        self.rank(&self.ceiling).unwrap_or(self.levels.len())
    }

    /// The levels above the ceiling (sources labelled with one are never captured).
    #[must_use]
    pub fn above_ceiling(&self) -> &[String] {
        self.levels
            .get(self.ceiling_rank() + 1..)
            .unwrap_or_default()
    }

    /// The levels a query asking for content up to `max` may see: up to `max` and never above
    /// the ceiling.
    ///
    /// # Errors
    /// As [`Self::rank`], for `max`.
    pub fn visible_up_to(&self, max: Option<&str>) -> Result<Vec<String>> {
        let top = match max {
            Some(level) => self.rank(level)?.min(self.ceiling_rank()),
            None => self.ceiling_rank(),
        };
        Ok(self.levels[..=top.min(self.levels.len() - 1)].to_vec())
    }

    /// What is wrong with the section, for the config loader.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        if self.levels.is_empty() {
            return Err("[sensitivity] levels must name at least one level".into());
        }
        for (i, level) in self.levels.iter().enumerate() {
            if level.trim().is_empty() || level.len() > 64 {
                return Err(format!(
                    "[sensitivity] levels: {level:?} must be 1 to 64 characters"
                ));
            }
            if self.levels[..i].contains(level) {
                return Err(format!("[sensitivity] levels: {level:?} is listed twice"));
            }
        }
        for (field, level) in [("default", &self.default), ("ceiling", &self.ceiling)] {
            if !self.levels.contains(level) {
                return Err(format!(
                    "[sensitivity] {field} = {level:?} is not one of the levels ({})",
                    self.levels.join(", ")
                ));
            }
        }
        if self.rank(&self.default).ok() > self.rank(&self.ceiling).ok() {
            return Err(format!(
                "[sensitivity] default = {:?} is above the ceiling {:?}: nothing added without --sensitivity could be captured",
                self.default, self.ceiling
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_rank_lowest_first_and_queries_never_see_past_the_ceiling() {
        let s = Sensitivity::default();
        assert!(s.check().is_ok());
        assert_eq!(s.rank("public").unwrap(), 0);
        assert!(s.within_ceiling("confidential").unwrap());
        assert!(!s.within_ceiling("secret").unwrap());
        assert_eq!(s.above_ceiling(), ["secret".to_string()]);
        assert_eq!(
            s.visible_up_to(Some("internal")).unwrap(),
            ["public", "internal"]
        );
        assert_eq!(
            s.visible_up_to(Some("secret")).unwrap(),
            ["public", "internal", "confidential"]
        );
        assert_eq!(s.visible_up_to(None).unwrap().len(), 3);
        let err = s.rank("top-secret").unwrap_err().to_string();
        assert!(
            err.contains("public, internal, confidential, secret"),
            "{err}"
        );
    }

    #[test]
    fn a_section_that_cannot_work_is_refused_naming_the_field() {
        let bad = |f: fn(&mut Sensitivity)| {
            let mut s = Sensitivity::default();
            f(&mut s);
            s.check().unwrap_err()
        };
        assert!(bad(|s| s.levels.clear()).contains("at least one"));
        assert!(bad(|s| s.levels.push("public".into())).contains("twice"));
        assert!(bad(|s| s.ceiling = "top".into()).contains("ceiling"));
        assert!(bad(|s| s.default = "secret".into()).contains("above the ceiling"));
    }
}

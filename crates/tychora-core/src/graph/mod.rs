//! The code graph (DESIGN §9): relation assertions built by the syntactic resolver at publication
//! ([`build`]), and the bounded expansion that feeds the graph channel at query time ([`expand`]).

pub(crate) mod build;
pub(crate) mod expand;
pub use expand::Hop;
pub mod symbol;

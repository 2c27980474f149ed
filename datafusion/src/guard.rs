//! [`session_context`] and [`B2ndQueryPlanner`]: the planner that lets a `DELETE` or an
//! `UPDATE` reach a b2nd table only with its whole `WHERE`.
//!
//! DataFusion 55 hands a table provider's `delete_from` and `update` the predicates it finds
//! on the table's own scan (`extract_dml_filters`): a `WHERE` the optimizer folded to false leaves an
//! empty relation and no predicate, and a subquery (`IN (SELECT ...)`, `EXISTS`) becomes a join
//! whose predicates are dropped or taken from the wrong scan. "No predicate" means "every row",
//! so `DELETE FROM t WHERE 1 = 0` would empty the table. This planner looks at the optimized
//! plan first: a `DELETE` or `UPDATE` whose input is the table's scan under filters and
//! projections (no subquery in a predicate or a new value) goes on to DataFusion's planner;
//! one whose `WHERE` matched nothing at planning time changes nothing (count 0); anything else
//! (joins such as `UPDATE ... FROM`, subqueries, unions) is refused before any change. A b2nd
//! table refuses `DELETE` and `UPDATE` planned without it.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::{lit, Expr, LogicalPlan, LogicalPlanBuilder, WriteOp};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use datafusion::prelude::{SessionConfig, SessionContext};

tokio::task_local! {
    /// Set while [`B2ndQueryPlanner`] plans a statement it checked.
    static CHECKED: ();
}

/// Whether the statement being planned went through [`B2ndQueryPlanner`].
pub(crate) fn checked() -> bool {
    CHECKED.try_with(|_| ()).is_ok()
}

/// A DataFusion session whose planner is [`B2ndQueryPlanner`] (DataFusion's default features
/// otherwise): the session to run SQL that changes b2nd tables in.
///
/// ```
/// use datafusion::prelude::SessionConfig;
/// let ctx = b2nd_datafusion::session_context(SessionConfig::new());
/// # let _ = ctx;
/// ```
pub fn session_context(config: SessionConfig) -> SessionContext {
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_query_planner(Arc::new(B2ndQueryPlanner))
        .build();
    SessionContext::new_with_state(state)
}

/// DataFusion's physical planner with a check of every `DELETE` and `UPDATE` first (see the module
/// documentation); install it with [`session_context`] or
/// `SessionStateBuilder::with_query_planner`.
#[derive(Debug, Default, Clone, Copy)]
pub struct B2ndQueryPlanner;

#[async_trait]
impl QueryPlanner for B2ndQueryPlanner {
    async fn create_physical_plan(
        &self,
        plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let planner = DefaultPhysicalPlanner::default();
        match deletes(plan)? {
            Deletes::NothingMatches => {
                // The WHERE was folded to false: no row matches, none is changed.
                let zero = LogicalPlanBuilder::empty(true)
                    .project(vec![lit(0u64).alias("count")])?
                    .build()?;
                planner.create_physical_plan(&zero, session).await
            }
            Deletes::Whole => {
                CHECKED
                    .scope((), planner.create_physical_plan(plan, session))
                    .await
            }
        }
    }
}

/// What the `DELETE`s and `UPDATE`s of a plan look like after optimization.
enum Deletes {
    /// None, or each one's input is the target's scan under filters and projections.
    Whole,
    /// A single `DELETE` or `UPDATE` whose input the optimizer emptied (its WHERE is false).
    NothingMatches,
}

fn deletes(plan: &LogicalPlan) -> Result<Deletes> {
    let mut out = Deletes::Whole;
    plan.apply(|node| {
        if let LogicalPlan::Dml(d) = node {
            if matches!(d.op, WriteOp::Delete | WriteOp::Update) {
                if scans_nothing(&d.input) && matches!(plan, LogicalPlan::Dml(_)) {
                    out = Deletes::NothingMatches;
                } else {
                    check_input(&d.input, &d.table_name, &d.op)?;
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(out)
}

/// Whether `input` reads no table at all (the optimizer replaced a false WHERE's scan).
fn scans_nothing(input: &LogicalPlan) -> bool {
    let mut scans = false;
    let _ = input.apply(|n| {
        scans |= matches!(n, LogicalPlan::TableScan(_));
        Ok(TreeNodeRecursion::Continue)
    });
    !scans
}

/// Refuse a `DELETE` or `UPDATE` input other than the target's scan under filters and
/// projections (without subqueries).
fn check_input(input: &LogicalPlan, target: &TableReference, op: &WriteOp) -> Result<()> {
    let verb = match op {
        WriteOp::Delete => "DELETE FROM",
        _ => "UPDATE",
    };
    let refuse = |what: String| {
        Err(DataFusionError::Plan(format!(
            "{verb} {target}: {what}; DataFusion 55 does not hand such a statement to the table \
             whole, so b2nd refuses it (nothing was changed): change rows by predicates and \
             values over the table's own columns"
        )))
    };
    let mut bad: Option<String> = None;
    input.apply(|n| {
        match n {
            LogicalPlan::Projection(p) => {
                if let Some(e) = p.expr.iter().find(|e| has_subquery(e)) {
                    bad = Some(format!("the value {e} holds a subquery"));
                }
            }
            LogicalPlan::SubqueryAlias(_) => {}
            LogicalPlan::Filter(f) if !has_subquery(&f.predicate) => {}
            LogicalPlan::TableScan(s) if s.table_name.resolved_eq(target) => {
                if let Some(f) = s.filters.iter().find(|f| has_subquery(f)) {
                    bad = Some(format!("the predicate {f} holds a subquery"));
                }
            }
            LogicalPlan::Filter(f) => {
                bad = Some(format!("the predicate {} holds a subquery", f.predicate));
            }
            other => {
                bad = Some(format!(
                    "its WHERE becomes a plan with {} (a subquery or another table)",
                    other.display()
                ));
            }
        }
        Ok(if bad.is_some() {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    match bad {
        Some(what) => refuse(what),
        None => Ok(()),
    }
}

fn has_subquery(e: &Expr) -> bool {
    e.exists(|x| {
        Ok(matches!(
            x,
            Expr::ScalarSubquery(_) | Expr::InSubquery(_) | Expr::Exists(_)
        ))
    })
    .unwrap_or(true)
}

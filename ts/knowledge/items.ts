import type { KnowledgeChange, Migration, ProjectConfig } from '../contracts/knowledge.js'
import { TychoraError } from '../errors.js'

/** An approved item as the accepted migrations up to some point leave it. */
export interface Item {
  id: string
  title: string
  kind: string
  body: string
  sensitivity: string
  superseded_by?: string
  /** The migration that last changed it. */
  migration: string
}

/** Items after applying `change` (accepted) to `items`; throws when the change does not fit them. */
export function applyChange(items: Map<string, Item>, change: KnowledgeChange, migration: string, config: ProjectConfig): Map<string, Item> {
  const next = new Map(items)
  const existing = items.get(change.item)
  const must = (): Item => {
    if (!existing) throw new TychoraError('E_NOT_FOUND', `no approved item ${JSON.stringify(change.item)}: ${change.op} needs one (create it first)`)
    if (existing.superseded_by) throw new TychoraError('E_CONFLICT', `item ${change.item} was superseded by ${existing.superseded_by}; change that one instead`)
    return existing
  }
  switch (change.op) {
    case 'create': {
      if (existing) throw new TychoraError('E_CONFLICT', `item ${change.item} already exists (migration ${existing.migration}); propose an edit instead`)
      const sensitivity = change.sensitivity ?? config.sensitivity.default
      checkLevel(sensitivity, config)
      next.set(change.item, { id: change.item, title: change.title, kind: change.kind, body: change.body, sensitivity, migration })
      break
    }
    case 'edit': {
      const item = must()
      next.set(change.item, { ...item, body: change.body, title: change.title ?? item.title, migration })
      break
    }
    case 'supersede': {
      const item = must()
      if (change.by === change.item) throw new TychoraError('E_INVALID_ARGUMENT', `item ${change.item} cannot supersede itself`)
      const by = items.get(change.by)
      if (!by || by.superseded_by) throw new TychoraError('E_NOT_FOUND', `no current approved item ${JSON.stringify(change.by)} to supersede ${change.item} with`)
      next.set(change.item, { ...item, superseded_by: change.by, migration })
      break
    }
    case 'sensitivity': {
      const item = must()
      checkLevel(change.sensitivity, config)
      next.set(change.item, { ...item, sensitivity: change.sensitivity, migration })
      break
    }
  }
  return next
}

/** Every item the accepted migrations leave, in order; rejected ones change nothing. */
export function foldItems(migrations: Migration[], config: ProjectConfig): Map<string, Item> {
  let items = new Map<string, Item>()
  for (const m of migrations) if (m.decision === 'accepted') items = applyChange(items, m.change, m.id, config)
  return items
}

export function checkLevel(level: string, config: ProjectConfig): void {
  if (!config.sensitivity.levels.includes(level)) {
    throw new TychoraError('E_INVALID_ARGUMENT', `sensitivity ${JSON.stringify(level)} is not one of the project's levels (${config.sensitivity.levels.join(', ')})`)
  }
}

/** Whether content at `level` may be indexed under the project's ceiling. */
export const withinCeiling = (level: string, config: ProjectConfig) => config.sensitivity.levels.indexOf(level) <= config.sensitivity.levels.indexOf(config.sensitivity.ceiling)

/** `create decision-log-format`. */
export const describeChange = (change: KnowledgeChange) => `${change.op} ${change.item}${change.op === 'supersede' ? ` by ${change.by}` : ''}`

import { describe, expectTypeOf, it } from 'vitest'
import type { z } from 'zod'
import type {
  ChunkEvidenceSchema,
  JobListSchema,
  JobStatusSchema,
  RevisionEvidenceSchema,
  RunBriefSchema,
  RunListSchema,
  SnapshotEvidenceSchema,
  SourceEvidenceSchema,
  UnitEvidenceSchema,
  UnitTypeSchema,
} from '../../ts/contracts/evidence.js'
import type { AddRequestSchema, ProgressSchema, ReceiptSchema, StampSchema } from '../../ts/contracts/ingest.js'
import type { QueryRequestSchema } from '../../ts/contracts/query.js'
import type { QueryResultSchema } from '../../ts/contracts/result.js'
import type { ListSourcesRequestSchema, SnapshotListSchema, SourceListSchema } from '../../ts/contracts/service.js'
import type { InspectSymbolRequestSchema, SymbolReportSchema } from '../../ts/contracts/symbol.js'
import type { InitReportSchema, StatusSchema, VerifyReportSchema } from '../../ts/contracts/workspace.js'
import type { BackupReportSchema, CompactReportSchema, FindingSchema, PurgeReportSchema, SummaryReportSchema, WithdrawReportSchema } from '../../ts/contracts/operations.js'
import type { PackEntrySchema, PackSourceSchema, ResolvedPackSchema } from '../../ts/contracts/pack.js'
import type { ListRecordsRequestSchema, RecordDetailSchema, RecordListSchema } from '../../ts/contracts/records.js'
import type { DeclareRelationRequestSchema, ListRelationsRequestSchema, RelationAssertionSchema } from '../../ts/contracts/relations.js'
import type * as Native from '../../ts/native/index.cjs'

/**
 * The seam's two descriptions of every type must be the same type: the declarations napi-rs
 * generates from the Rust structs (`ts/native/index.d.cts`, whose conversions the Rust compiler
 * checks field for field against the core's types) and the zod schemas the surfaces validate and
 * document with. A field that exists on one side only fails here.
 */
type Out<S extends z.ZodType> = z.output<S>
type In<S extends z.ZodType> = z.output<S>

describe('native results are exactly the zod contracts', () => {
  it('admin and provenance results', () => {
    expectTypeOf<Native.InitReport>().toEqualTypeOf<Out<typeof InitReportSchema>>()
    expectTypeOf<Native.Status>().toEqualTypeOf<Out<typeof StatusSchema>>()
    expectTypeOf<Native.VerifyReport>().toEqualTypeOf<Out<typeof VerifyReportSchema>>()
    expectTypeOf<Native.SourceList>().toEqualTypeOf<Out<typeof SourceListSchema>>()
    expectTypeOf<Native.SnapshotList>().toEqualTypeOf<Out<typeof SnapshotListSchema>>()
    expectTypeOf<Native.SourceEvidence>().toEqualTypeOf<Out<typeof SourceEvidenceSchema>>()
    expectTypeOf<Native.RevisionEvidence>().toEqualTypeOf<Out<typeof RevisionEvidenceSchema>>()
    expectTypeOf<Native.UnitEvidence>().toEqualTypeOf<Out<typeof UnitEvidenceSchema>>()
    expectTypeOf<Native.UnitType>().toEqualTypeOf<Out<typeof UnitTypeSchema>>()
    expectTypeOf<Native.ChunkEvidence>().toEqualTypeOf<Out<typeof ChunkEvidenceSchema>>()
    expectTypeOf<Native.SnapshotEvidence>().toEqualTypeOf<Out<typeof SnapshotEvidenceSchema>>()
    expectTypeOf<Native.JobStatus>().toEqualTypeOf<Out<typeof JobStatusSchema>>()
    expectTypeOf<Native.JobList>().toEqualTypeOf<Out<typeof JobListSchema>>()
    expectTypeOf<Native.RunBrief>().toEqualTypeOf<Out<typeof RunBriefSchema>>()
    expectTypeOf<Native.RunList>().toEqualTypeOf<Out<typeof RunListSchema>>()
  })

  it('packs: listed, shown and resolved', () => {
    expectTypeOf<Native.PackEntry>().toEqualTypeOf<Out<typeof PackEntrySchema>>()
    expectTypeOf<Native.PackSource>().toEqualTypeOf<Out<typeof PackSourceSchema>>()
    expectTypeOf<Native.ResolvedPack>().toEqualTypeOf<Out<typeof ResolvedPackSchema>>()
  })

  it('structured records: listed and shown with their evidence', () => {
    expectTypeOf<Native.RecordList>().toEqualTypeOf<Out<typeof RecordListSchema>>()
    expectTypeOf<Native.RecordDetail>().toEqualTypeOf<Out<typeof RecordDetailSchema>>()
    expectTypeOf<Native.RelationAssertion>().toEqualTypeOf<Out<typeof RelationAssertionSchema>>()
  })

  it('operations: compaction, retention, backup, withdrawal and erasure', () => {
    expectTypeOf<Native.CompactReport>().toEqualTypeOf<Out<typeof CompactReportSchema>>()
    expectTypeOf<Native.PurgeReport>().toEqualTypeOf<Out<typeof PurgeReportSchema>>()
    expectTypeOf<Native.BackupReport>().toEqualTypeOf<Out<typeof BackupReportSchema>>()
    expectTypeOf<Native.SummaryReport>().toEqualTypeOf<Out<typeof SummaryReportSchema>>()
    expectTypeOf<Native.WithdrawReport>().toEqualTypeOf<Out<typeof WithdrawReportSchema>>()
    expectTypeOf<Native.Finding>().toEqualTypeOf<Out<typeof FindingSchema>>()
  })

  it('jobs: receipts and progress', () => {
    expectTypeOf<Native.Receipt>().toEqualTypeOf<Out<typeof ReceiptSchema>>()
    expectTypeOf<Native.Progress>().toEqualTypeOf<Out<typeof ProgressSchema>>()
  })

  it('the query result (crossing as JSON) and the symbol report', () => {
    expectTypeOf<Native.QueryResult>().toEqualTypeOf<Out<typeof QueryResultSchema>>()
    expectTypeOf<Native.SymbolReport>().toEqualTypeOf<Out<typeof SymbolReportSchema>>()
  })
})

describe('validated requests are exactly what the native functions take', () => {
  it('search, add, inspect symbol, list sources', () => {
    expectTypeOf<In<typeof QueryRequestSchema>>().toEqualTypeOf<Native.QueryRequest>()
    // The stamp of curated knowledge is no surface's to send: only migrate apply adds it.
    expectTypeOf<In<typeof AddRequestSchema>>().toEqualTypeOf<Omit<Native.AddRequest, 'stamp'>>()
    expectTypeOf<Native.AddRequest['stamp']>().toEqualTypeOf<Native.Stamp | undefined>()
    expectTypeOf<Out<typeof StampSchema>>().toEqualTypeOf<Native.Stamp>()
    expectTypeOf<In<typeof InspectSymbolRequestSchema>>().toEqualTypeOf<Native.InspectSymbolRequest>()
    expectTypeOf<Omit<In<typeof ListSourcesRequestSchema>, 'project'>>().toEqualTypeOf<Native.ListSourcesOptions>()
    expectTypeOf<In<typeof ListRecordsRequestSchema>>().toEqualTypeOf<Native.ListRecordsOptions>()
    expectTypeOf<In<typeof ListRelationsRequestSchema>>().toEqualTypeOf<Native.ListRelationsOptions>()
    expectTypeOf<In<typeof DeclareRelationRequestSchema>>().toEqualTypeOf<Native.DeclareRelation>()
  })
})

// The package's only barrel: public SDK exports, no logic.
export { Workspace, openWorkspace, initWorkspace, type AddOptions } from './engine/workspace.js'
export { TychoraError, ERROR_CODES, ErrorCodeSchema, EXIT_PARTIAL, type ErrorCode } from './errors.js'
export { QueryRequestSchema, KindSchema, FormatSchema, ChannelSchema, type QueryRequest } from './contracts/query.js'
export { QueryResultSchema, SegmentSchema, CitationSchema, LocatorSchema, type QueryResult, type Segment, type Citation } from './contracts/result.js'
export {
  AddRequestSchema,
  ReceiptSchema,
  DiagnosticSchema,
  ProgressSchema,
  AddPlanSchema,
  RebuildReportSchema,
  type AddRequest,
  type Receipt,
  type Diagnostic,
  type Progress,
  type AddPlan,
  type RebuildReport,
} from './contracts/ingest.js'
export type {
  FamilySpec,
  TextEmbedder,
  TextReranker,
  TextProviders,
  ProviderNeeds,
  ModelProvider,
  ProviderCall,
  ImageDescriber,
  DescribeImageRequest,
  ImageDescription,
} from './contracts/provider.js'
export { createVoyageProvider, type VoyageProviderOptions } from './providers/voyage.js'
export { createAnthropicDescriber, type AnthropicDescriberOptions } from './providers/anthropic.js'
export { providersFor, openConfigured, imageDescriber } from './service/providers.js'
export { DescriptionEntrySchema, DescribeReportSchema, type DescriptionEntry, type DescribeReport } from './contracts/description.js'
export {
  PackSchema,
  KindDefinitionSchema,
  PackEntrySchema,
  ResolvedPackSchema,
  type Pack,
  type PackEntry,
  type ResolvedPack,
} from './contracts/pack.js'
export { listPacks, validatePacks, showPack, resolvePack } from './engine/packs.js'
export { InitReportSchema, StatusSchema, VerifyReportSchema, type InitReport, type Status, type VerifyReport } from './contracts/workspace.js'
export { render, toMarkdown, toAgent, FORMATS, type Format } from './format/render.js'
export { evalBeir, type BeirOptions, type BeirReport } from './eval/beir.js'
export { evalBeirAsCode, type BeirCodeOptions, type BeirCodeReport } from './eval/beir-code.js'
export { ndcgAt, recallAt, mrrAt, score, type Scores } from './eval/metrics.js'
export { connect, type ConnectOptions, type HttpEvidenceClient } from './client/http-client.js'
export { connectAdmin } from './client/admin-client.js'
export type { AdminClient } from './contracts/client.js'
export {
  ProposeRequestSchema,
  ProposalSchema,
  ProposalListSchema,
  MigrationSchema,
  ProjectConfigSchema,
  ApplyReportSchema,
  KnowledgeChangeSchema,
  type ProposeRequest,
  type Proposal,
  type ProposalList,
  type Migration,
  type ProjectConfig,
  type ApplyReport,
  type KnowledgeChange,
} from './contracts/knowledge.js'
export { initProject, findProject, projectPaths, type ProjectPaths } from './knowledge/layout.js'
export { propose, accept, reject, listProposals, readProposal, type EvidenceLookup } from './knowledge/lifecycle.js'
export { readMigrations, renumber } from './knowledge/migrations.js'
export { applyMigrations, answeringState, builtState, stateHash, readInputs } from './service/knowledge-state.js'

/** What the audit record of a call says about the resources it touched: the gateway sets their type, the store their ids. */
export interface AuditTrail {
  /** From the operation's tag (x-svc-resource-type). */
  resourceType: string | null;
  resourceIds: string[];
  sourceSystem?: string | null;
  externalReferenceId?: string | null;
  /** What the call said about itself beyond resource ids, set by its handler (a governed query run's query and input). */
  details?: Record<string, unknown> | null;
}

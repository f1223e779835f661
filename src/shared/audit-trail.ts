/** What the audit record of a call says about the resources it touched: the gateway sets their type, the store their ids. */
export interface AuditTrail {
  /** From the operation's tag (x-svc-resource-type). */
  resourceType: string | null;
  resourceIds: string[];
  sourceSystem?: string | null;
  externalReferenceId?: string | null;
}

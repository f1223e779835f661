/** Where each integration's last command ended in the primary's WAL (pg_lsn as text), for reads on replicas. */
export interface WritePositionsTable {
  agency_id: string;
  extension_id: string;
  lsn: string;
}

export interface WritePositionTables {
  write_positions: WritePositionsTable;
}

import type { ConsoleStrings } from "../console-strings.js";
import { text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { Table } from "./widgets.js";

/** A table of audit entries (time, action, key, actor, address), or the empty-state line. */
export function AuditTable(props: { s: ConsoleStrings; entries: Record<string, unknown>[] }) {
  const { s } = props;
  const columns: Column<Record<string, unknown>>[] = [
    { label: s.colTime, cell: (e) => when(e.timestamp) },
    { label: s.colAction, class: "mono", cell: (e) => text(e.action) },
    { label: s.colKey, class: "mono", cell: (e) => text(e.key) },
    { label: s.colActor, class: "mono", cell: (e) => text(e.actor ?? e.principal_id) },
    { label: s.colIp, class: "mono", cell: (e) => text(e.ip) },
  ];
  return <Table columns={columns} rows={props.entries} empty={<p class="muted">{s.noEntries}</p>} />;
}

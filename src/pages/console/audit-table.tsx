import type { ConsoleStrings } from "../console-strings.js";
import { text, when } from "./kit.js";

/** A table of audit entries (time, action, key, actor, address), or the empty-state line. */
export function AuditTable(props: { s: ConsoleStrings; entries: Record<string, unknown>[] }) {
  const { s } = props;
  if (props.entries.length === 0) return <p class="muted">{s.noEntries}</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">{s.colTime}</th>
            <th scope="col">{s.colAction}</th>
            <th scope="col">{s.colKey}</th>
            <th scope="col">{s.colActor}</th>
            <th scope="col">{s.colIp}</th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((e) => (
            <tr>
              <td>{when(e.timestamp)}</td>
              <td class="mono">{text(e.action)}</td>
              <td class="mono">{text(e.key)}</td>
              <td class="mono">{text(e.actor ?? e.principal_id)}</td>
              <td class="mono">{text(e.ip)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

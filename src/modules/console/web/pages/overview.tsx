// Overview: plan, credits (a meter), period end, calls today, and the last 30 days as a bar chart with the
// same numbers in a table. "Calls today" is the chart's last day, so the two figures cannot disagree
// (`api_calls_today` counts every request made with a key, and none made from this console).
import { useEffect, useId, useState } from 'preact/hooks'
import { api, type Usage, type UsageDay } from '../api'
import { CopyButton, ErrorMessage, Link, ModelStatus, Page, useAction } from '../components'
import { formatDate, formatDay, planName } from '../format'
import { plural } from '../../../../shared/wording'

const DAYS = 30

export function Overview() {
  const [usage, setUsage] = useState<Usage | null>(null)
  const [days, setDays] = useState<UsageDay[] | null>(null)
  const usageCall = useAction()
  const historyCall = useAction()
  useEffect(() => {
    void usageCall.run(api.usage).then((answer) => answer && setUsage(answer))
    void historyCall.run(() => api.usageHistory(DAYS)).then((answer) => answer && setDays(answer.days))
  }, [])
  // A new account has nothing to chart yet: it gets the first steps at the top instead.
  const fresh = usage !== null && days !== null && usage.credits.used === 0 && days.every((day) => callsOn(day) === 0)
  return (
    <Page title="Overview" loading={(usage === null && !usageCall.error) || (days === null && !historyCall.error)}>
      <ModelStatus />
      {fresh && <FirstSteps />}
      <ErrorMessage error={usageCall.error} />
      {usage ? <UsageSummary usage={usage} today={days?.at(-1)} /> : !usageCall.error && <p aria-busy="true">Loading your usage…</p>}
      {!fresh && (
        <section aria-labelledby="chart-h">
          <h2 id="chart-h">Last {DAYS} days</h2>
          <ErrorMessage error={historyCall.error} />
          {days ? <DailyChart days={days} /> : !historyCall.error && <p aria-busy="true">Loading the daily numbers…</p>}
        </section>
      )}
      {!fresh && (
        <p>
          <Link href="/try">Try an image</Link> · <Link href="/keys">Manage API keys</Link>
        </p>
      )}
    </Page>
  )
}

/** What a new account does first: try an image, make a key, call the API with it. */
function FirstSteps() {
  const command = [
    `curl -sS ${location.origin}/api/alt-text`,
    `-H "X-API-Key: $ALTTEXT_API_KEY"`,
    `-H 'Content-Type: application/json'`,
    `-d '{"image_url": "https://example.com/photo.jpg"}'`,
  ].join(' \\\n  ')
  return (
    <section aria-labelledby="first-h" class="first-steps">
      <h2 id="first-h">First steps</h2>
      <ol>
        <li>
          <Link href="/try">Try an image</Link>: upload one or give its address, and read the alt text the model writes for it.
        </li>
        <li>
          <Link href="/keys">Make an API key</Link> for each site or script that will ask for alt text, so that you can revoke one on its own.
        </li>
        <li>
          <p>Call the API with the key, from a shell or your code:</p>
          <pre>
            <code>{command}</code>
          </pre>
          <CopyButton text={command} label="Copy the curl command" />
        </li>
      </ol>
    </section>
  )
}

function UsageSummary({ usage, today }: { usage: Usage; today: UsageDay | undefined }) {
  const { total, used, remaining } = usage.credits
  return (
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">This period</h2>
      <dl class="facts">
        <div>
          <dt>Plan</dt>
          <dd>{planName(usage.plan)}</dd>
        </div>
        <div>
          <dt>Credits left</dt>
          <dd>
            {remaining} of {total}
          </dd>
        </div>
        <div>
          <dt>Period ends</dt>
          <dd>
            <time dateTime={usage.period_end}>{formatDate(usage.period_end)}</time>
          </dd>
        </div>
        {today && (
          <div>
            <dt>Calls today</dt>
            <dd>{callsOn(today)}</dd>
          </div>
        )}
      </dl>
      <div class="field">
        <label for="credits-meter">
          Credits used: {used} of {total}
        </label>
        <meter id="credits-meter" min={0} max={total} value={used} low={total * 0.7} high={total * 0.9} optimum={0}>
          {used} of {total}
        </meter>
      </div>
    </section>
  )
}

/** Alt-text calls of one day: charged, cached and failed (the chart's bar). */
const callsOn = (day: UsageDay) => day.generations + day.cached + day.failed

const CHART = { width: 600, height: 160, top: 8, bottom: 2, left: 0, right: 0 }

export function DailyChart({ days }: { days: UsageDay[] }) {
  const id = useId()
  const totals = days.map(callsOn)
  const max = Math.max(1, ...totals)
  const sum = (field: 'generations' | 'cached' | 'failed') => days.reduce((n, d) => n + d[field], 0)
  const busiest = days[totals.indexOf(Math.max(...totals))]
  const summary =
    totals.every((t) => t === 0) || !busiest
      ? `No calls in the last ${days.length} days.`
      : `${plural(sum('generations'), 'new description')}, ${plural(sum('cached'), 'cached answer')} and ${plural(sum('failed'), 'failure')} in the last ${days.length} days; the busiest day was ${formatDay(busiest.date)}, with ${plural(max, 'call')}.`
  const plot = CHART.height - CHART.top - CHART.bottom
  const slot = (CHART.width - CHART.left - CHART.right) / Math.max(1, days.length)
  const scale = (n: number) => (n / max) * plot
  return (
    <figure class="chart">
      <p id={`${id}-s`}>{summary}</p>
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} role="img" aria-labelledby={`${id}-s`} preserveAspectRatio="none">
        <title>{summary}</title>
        <line
          class="axis"
          vector-effect="non-scaling-stroke"
          x1={CHART.left}
          x2={CHART.width - CHART.right}
          y1={CHART.height - CHART.bottom}
          y2={CHART.height - CHART.bottom}
        />
        {days.map((day, i) => {
          const x = CHART.left + i * slot + slot * 0.15
          const width = slot * 0.7
          let y = CHART.height - CHART.bottom
          const bars = (['generations', 'cached', 'failed'] as const).map((field) => {
            const h = scale(day[field])
            y -= h
            return h > 0 ? <rect key={field} class={`bar-${field}`} x={x} y={y} width={width} height={Math.max(0, h - 1)} /> : null
          })
          return <g key={day.date}>{bars}</g>
        })}
      </svg>
      {days.length > 0 && (
        <p class="chart-range" aria-hidden="true">
          <span>{formatDay(days[0]!.date)}</span>
          <span>{formatDay(days[days.length - 1]!.date)}</span>
        </p>
      )}
      <figcaption>
        <ul class="legend" aria-label="Legend">
          <li>
            <span class="swatch bar-generations" aria-hidden="true" /> New descriptions (charged)
          </li>
          <li>
            <span class="swatch bar-cached" aria-hidden="true" /> Cached answers (free)
          </li>
          <li>
            <span class="swatch bar-failed" aria-hidden="true" /> Failures
          </li>
        </ul>
      </figcaption>
      <details>
        <summary>Show the numbers as a table</summary>
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Calls per day, last {days.length} days (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">New</th>
                <th scope="col">Cached</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {days.map((day) => (
                <tr key={day.date}>
                  <th scope="row">
                    <time dateTime={day.date}>{formatDay(day.date)}</time>
                  </th>
                  <td>{day.generations}</td>
                  <td>{day.cached}</td>
                  <td>{day.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let ticksPerSecond: number | undefined;

/** CPU seconds a process has used so far (user + system, from /proc). */
export function processCpuSeconds(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** The machine's CPU seconds so far, busy and in all (every core, from /proc/stat). */
export function machineCpuSeconds(): { busy: number; total: number } {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  const [, ...values] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = values.map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  // idle and iowait
  const idle = ticks[3] + (ticks[4] ?? 0);
  return { busy: (total - idle) / ticksPerSecond, total: total / ticksPerSecond };
}

/** CPU milliseconds per item between two readings, two decimals. */
export const msPer = (seconds: number, items: number) => Number(((seconds * 1000) / items).toFixed(2));

/** A process's peak resident memory so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024);
}

'use strict';
/* global require, process, URL */
// node fresh-mysql-database.js URL NAME: (re)creates database NAME on the server of URL and prints URL naming it.
// node fresh-mysql-database.js URL --drop: drops the database URL names.
const mysql = require('mysql2/promise');

async function main([url, name]) {
  const target = new URL(url);
  const database = name === '--drop' ? target.pathname.slice(1) : name;
  if (!/^\w+$/.test(database)) throw new Error(`not a database name: ${database}`);
  target.pathname = '/';
  const connection = await mysql.createConnection(target.toString());
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
    if (name === '--drop') return;
    await connection.query(`CREATE DATABASE \`${database}\``);
    target.pathname = `/${database}`;
    process.stdout.write(`${target}\n`);
  } finally {
    await connection.end();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});

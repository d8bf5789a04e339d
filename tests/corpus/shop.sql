-- The data the corpus's datasette browses (tests/support/corpus.py makes shop.db of it).
CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  joined TEXT NOT NULL
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  product TEXT NOT NULL,
  quantity INTEGER NOT NULL,
  total REAL NOT NULL,
  status TEXT NOT NULL,
  placed TEXT NOT NULL
);
INSERT INTO customers VALUES
  (1, 'Ada Lovelace', 'London', '2024-01-12'),
  (2, 'Grace Hopper', 'New York', '2024-02-03'),
  (3, 'Alan Turing', 'Manchester', '2024-03-21'),
  (4, 'Katherine Johnson', 'Hampton', '2024-04-09'),
  (5, 'Edsger Dijkstra', 'Eindhoven', '2024-05-30');
INSERT INTO orders VALUES
  (1, 1, 'Analytical engine manual', 1, 49.5, 'shipped', '2024-06-01'),
  (2, 2, 'Compiler handbook', 2, 72.0, 'paid', '2024-06-03'),
  (3, 3, 'Enigma puzzle', 1, 19.99, 'new', '2024-06-04'),
  (4, 4, 'Orbital charts', 3, 105.75, 'shipped', '2024-06-07'),
  (5, 5, 'Shortest path poster', 1, 12.0, 'refunded', '2024-06-09'),
  (6, 1, 'Punch cards (box)', 4, 30.0, 'paid', '2024-06-11'),
  (7, 2, 'Nanosecond wire', 10, 15.5, 'new', '2024-06-12'),
  (8, 3, 'Chess clock', 1, 64.0, 'shipped', '2024-06-15');

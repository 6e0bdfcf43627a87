CREATE TABLE teams (id int PRIMARY KEY, code text UNIQUE, size int CHECK (size >= 0));
CREATE TABLE players (id int PRIMARY KEY, team int REFERENCES teams);
\d teams
\d players
DROP TABLE players;
DROP TABLE teams;

CREATE TABLE odc (id integer PRIMARY KEY, name varchar(20) NOT NULL, price numeric(10,2), born date)
help
help odc
